//! DSP log lines in words: each message record a line carries (`lpai:` and hex digits,
//! `lpai_direct::message::log`) replaced by its text, rendered with this build's message table.

use lpai_direct::message::log::record_in;

/// `line` with every record in it put in words.
pub fn line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some((start, end, record)) = record_in(rest) {
        out.push_str(&rest[..start]);
        out.push_str(lpai_direct::message::render(record.as_bytes()).as_str());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_put_in_words_and_the_rest_of_the_line_is_kept() {
        // NoSuchContext ("no loaded context has id {}") with the value 7: MESSAGE, its id, UNSIGNED 7, END.
        let id = lpai_direct::message::Message::NoSuchContext as u16;
        let record = [0u8, 1, id as u8, (id >> 8) as u8, 2, 7, 0];
        let mut buffer = [0u8; 64];
        let logged = lpai_direct::message::log_line(&record, &mut buffer).to_str().unwrap().to_string();
        let captured = format!("12-07 10:00:00.1 adsp lpai_direct:0: {logged} | and {logged}");
        assert_eq!(
            line(&captured),
            "12-07 10:00:00.1 adsp lpai_direct:0: no loaded context has id 7 | and no loaded context has id 7"
        );
        assert_eq!(line("nothing to render: lpai: alone"), "nothing to render: lpai: alone");
    }
}
