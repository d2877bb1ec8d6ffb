//! DSP log lines in words: each message record the lines carry (`lpai:` and hex digits, a long one in `lpai+`
//! pieces first: `lpai_direct::message::log`) replaced by its text, rendered with this build's message table.

use lpai_direct::message::log::record_in;

/// Reads a log line by line, joining a record's pieces.
#[derive(Default)]
pub struct LogRenderer {
    /// The pieces read so far of a record the next line continues.
    pending: Vec<u8>,
}

impl LogRenderer {
    /// `line` with every record in it put in words; `None` for a line that holds only the first pieces of a record
    /// (its words come with the line of the record's last piece, which is where they are written).
    pub fn line(&mut self, line: &str) -> Option<String> {
        let mut out = String::with_capacity(line.len());
        let mut rest = line;
        while let Some(piece) = record_in(rest) {
            self.pending.extend_from_slice(piece.record.as_bytes());
            if piece.continues {
                return None;
            }
            out.push_str(&rest[..piece.start]);
            out.push_str(lpai_direct::message::render(&self.pending).as_str());
            self.pending.clear();
            rest = &rest[piece.end..];
        }
        out.push_str(rest);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lpai_direct::message::Message;

    #[test]
    fn records_are_put_in_words_and_the_rest_of_the_line_is_kept() {
        // NoSuchContext ("no loaded context has id {}") with the value 7: MESSAGE, its id, UNSIGNED 7, END.
        let id = Message::NoSuchContext as u16;
        let record = [0u8, 1, id as u8, (id >> 8) as u8, 2, 7, 0];
        let mut buffer = [0u8; 64];
        let logged = lpai_direct::message::log_line(&record, &mut buffer).to_str().unwrap().to_string();
        let captured = format!("12-07 10:00:00.1 adsp lpai_direct:0: {logged} | and {logged}");
        let mut renderer = LogRenderer::default();
        assert_eq!(
            renderer.line(&captured).as_deref(),
            Some("12-07 10:00:00.1 adsp lpai_direct:0: no loaded context has id 7 | and no loaded context has id 7")
        );
        assert_eq!(renderer.line("nothing to render: lpai: alone").as_deref(), Some("nothing to render: lpai: alone"));
    }

    #[test]
    fn a_record_logged_in_pieces_is_rendered_once_on_its_last_line() {
        // A run-time text (TEXT, its length, its bytes) longer than one piece.
        let text = "x".repeat(200);
        let mut record = vec![0u8, 5, 200, 1];
        record.extend_from_slice(text.as_bytes());
        let mut lines = Vec::new();
        lpai_direct::message::log::log_pieces(&record, |line| {
            lines.push(format!("adsp: {}", line.to_str().unwrap()));
        });
        assert_eq!(lines.len(), 2);
        let mut renderer = LogRenderer::default();
        assert_eq!(renderer.line(&lines[0]), None);
        assert_eq!(renderer.line(&lines[1]), Some(format!("adsp: {text}")));
    }
}
