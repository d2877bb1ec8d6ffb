//! The book's checks (docs/, built by scripts/book.sh). The `source_` tests read the sources only: every internal
//! link and anchor resolves, every fenced block follows the book's conventions, the `<!-- help: ARGS -->` blocks
//! equal lpai-net-run's `--help`, the AEE table equals the one in `idl/src/aee.rs`, the latency chart equals the one
//! its committed records draw, and each shipped crate's front page points into the book. The `tested_blocks_` tests
//! run the book's `sh tested` blocks, and compare the help blocks with the release binary, so they need the builds
//! (`scripts/build-hexagon.sh`, then `cargo build --release -p lpai-direct-stub -p lpai-net-run` and the rest of
//! scripts/test.sh's build steps).
//!
//! `LPAI_BOOK_UPDATE=1 cargo test --test book source_` rewrites the generated parts (the help blocks and the AEE
//! table) in place instead of failing on them.

use lpai_net_run::cli::{self, Parser};
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------------------------
// Reading the book's sources.

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn book_source() -> PathBuf {
    root().join("docs/src")
}

/// Every markdown file under docs/src, sorted.
fn chapters() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|extension| extension == "md") {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(&book_source(), &mut found);
    found.sort();
    assert!(found.len() > 1, "no chapters under {}", book_source().display());
    found
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// `path` relative to the repository root, for messages.
fn shown(path: &Path) -> String {
    path.strip_prefix(root()).unwrap_or(path).display().to_string()
}

/// A fenced code block: where it opens (1-based line), its info string and its text.
#[derive(Debug)]
struct Block {
    line: usize,
    info: String,
    text: String,
    /// The line before the opening fence (a `<!-- help: ... -->` marker, say).
    line_before: String,
}

/// One line of a chapter outside code blocks, with its line number.
struct ProseLine<'a> {
    number: usize,
    text: &'a str,
}

/// A chapter split into its fenced blocks and the lines outside them.
struct Chapter<'a> {
    blocks: Vec<Block>,
    prose: Vec<ProseLine<'a>>,
    /// An opening fence without its closing one.
    unclosed: Option<usize>,
}

/// The fence a line opens or closes: its character, its length and what follows it.
fn fence(line: &str) -> Option<(char, usize, &str)> {
    let trimmed = line.trim_start();
    let character = trimmed.chars().next().filter(|first| *first == '`' || *first == '~')?;
    let length = trimmed.chars().take_while(|next| *next == character).count();
    (length >= 3).then(|| (character, length, trimmed[length..].trim()))
}

fn split_chapter(text: &str) -> Chapter<'_> {
    let mut chapter = Chapter { blocks: Vec::new(), prose: Vec::new(), unclosed: None };
    let mut open: Option<(char, usize, usize, Block)> = None;
    let mut previous = "";
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        match open.take() {
            None => match fence(line) {
                Some((character, length, info)) => {
                    let indent = line.len() - line.trim_start().len();
                    let block = Block {
                        line: number,
                        info: info.to_string(),
                        text: String::new(),
                        line_before: previous.into(),
                    };
                    open = Some((character, length, indent, block));
                }
                None => chapter.prose.push(ProseLine { number, text: line }),
            },
            Some((character, length, indent, mut block)) => match fence(line) {
                Some((closing, closing_length, rest))
                    if closing == character && closing_length >= length && rest.is_empty() =>
                {
                    chapter.blocks.push(block)
                }
                _ => {
                    // A block in a list item is indented with the item: its text is not.
                    let strip = line.len() - line.trim_start().len();
                    block.text.push_str(&line[strip.min(indent)..]);
                    block.text.push('\n');
                    open = Some((character, length, indent, block));
                }
            },
        }
        previous = line;
    }
    chapter.unclosed = open.map(|(_, _, _, block)| block.line);
    chapter
}

// ---------------------------------------------------------------------------------------------------------------
// Heading ids, as mdBook 0.5 makes them (mdbook-html: `id_from_content`, `unique_id`; smart punctuation is on).

/// The text a heading's inline markdown shows: code spans as they are, links as their text, HTML tags dropped,
/// emphasis markers dropped, and (smart punctuation) runs of two or more hyphens outside code turned into dashes,
/// which the id then drops.
fn inline_text(markdown: &str) -> String {
    let characters: Vec<char> = markdown.chars().collect();
    let mut text = String::new();
    let mut index = 0;
    while index < characters.len() {
        let character = characters[index];
        match character {
            '`' => {
                let ticks = characters[index..].iter().take_while(|next| **next == '`').count();
                let after = index + ticks;
                let close = (after..characters.len()).find(|start| {
                    characters[*start..].iter().take_while(|next| **next == '`').count() == ticks
                        && (*start == 0 || characters[*start - 1] != '`')
                });
                match close {
                    Some(close) => {
                        let code: String = characters[after..close].iter().collect();
                        let code = if code.len() > 2 && code.starts_with(' ') && code.ends_with(' ') {
                            code[1..code.len() - 1].to_string()
                        } else {
                            code
                        };
                        text.push_str(&code);
                        index = close + ticks;
                    }
                    None => {
                        text.extend(&characters[index..after]);
                        index = after;
                    }
                }
            }
            '\\' if index + 1 < characters.len() && characters[index + 1].is_ascii_punctuation() => {
                text.push(characters[index + 1]);
                index += 2;
            }
            '<' => match characters[index..].iter().position(|next| *next == '>') {
                Some(end) => index += end + 1,
                None => {
                    text.push('<');
                    index += 1;
                }
            },
            ']' if characters.get(index + 1) == Some(&'(') => {
                // The end of a link's text: skip its destination.
                let mut depth = 0;
                let mut end = index + 1;
                while end < characters.len() {
                    match characters[end] {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    end += 1;
                }
                index = end + 1;
            }
            '-' => {
                let run = characters[index..].iter().take_while(|next| **next == '-').count();
                if run == 1 {
                    text.push('-');
                }
                index += run;
            }
            '_' => {
                let before = index.checked_sub(1).map(|at| characters[at]);
                let after = characters.get(index + 1).copied();
                let inside_word = before.is_some_and(char::is_alphanumeric) && after.is_some_and(char::is_alphanumeric);
                if inside_word {
                    text.push('_');
                }
                index += 1;
            }
            '&' => {
                let rest: String = characters[index..characters.len().min(index + 8)].iter().collect();
                let entity = [("&amp;", '&'), ("&lt;", '<'), ("&gt;", '>'), ("&quot;", '"'), ("&#39;", '\'')]
                    .into_iter()
                    .find(|(name, _)| rest.starts_with(name));
                match entity {
                    Some((name, decoded)) => {
                        text.push(decoded);
                        index += name.len();
                    }
                    None => {
                        text.push('&');
                        index += 1;
                    }
                }
            }
            '[' | '*' | '!' => index += 1,
            other => {
                text.push(other);
                index += 1;
            }
        }
    }
    text
}

/// mdBook's `id_from_content`.
fn id_from_content(content: &str) -> String {
    content
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|character| {
            if character.is_alphanumeric() || character == '_' || character == '-' {
                Some(character)
            } else if character.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// mdBook's `unique_id`: `id`, or `id-1`, `id-2`, ... when taken.
fn unique_id(id: String, used: &mut HashSet<String>) -> String {
    if used.insert(id.clone()) {
        return id;
    }
    (1..).map(|counter| format!("{id}-{counter}")).find(|candidate| used.insert(candidate.clone())).unwrap()
}

/// A heading's text and its `{#id}` attribute, if any.
fn heading_attribute(text: &str) -> (&str, Option<String>) {
    if let Some(open) = text.rfind('{') {
        if text.ends_with('}') {
            let attributes = &text[open + 1..text.len() - 1];
            let id = attributes.split_whitespace().find_map(|word| word.strip_prefix('#')).map(str::to_string);
            return (text[..open].trim_end(), id);
        }
    }
    (text, None)
}

/// The ATX heading a line is: its text.
fn atx_heading(line: &str) -> Option<&str> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let trimmed = &line[indent..];
    let level = trimmed.chars().take_while(|next| *next == '#').count();
    if indent > 3 || !(1..=6).contains(&level) {
        return None;
    }
    let rest = &trimmed[level..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let rest = rest.trim();
    // A closing sequence of #s, when spaced from the text.
    let without_closing = rest.trim_end_matches('#');
    let rest =
        if without_closing.is_empty() || without_closing.ends_with([' ', '\t']) { without_closing } else { rest };
    Some(rest.trim())
}

/// Whether a prose line is plain paragraph text (what a setext underline or a definition can follow).
fn paragraph_text(line: &str) -> bool {
    let trimmed = line.trim_start();
    !trimmed.is_empty()
        && atx_heading(line).is_none()
        && !trimmed.starts_with(['|', '>', '<', '-', '*', '+', ':'])
        && !trimmed.chars().next().is_some_and(|first| first.is_ascii_digit() && trimmed.contains(". "))
        && line.len() - trimmed.len() < 4
}

/// The ids of a chapter's headings (and definition-list terms), as mdBook gives them.
fn heading_ids(text: &str) -> HashSet<String> {
    let chapter = split_chapter(text);
    let mut used = HashSet::new();
    let mut previous: Option<&ProseLine> = None;
    for line in &chapter.prose {
        let follows = previous.filter(|before| before.number + 1 == line.number && paragraph_text(before.text));
        let trimmed = line.text.trim();
        let heading = if let Some(heading) = atx_heading(line.text) {
            Some(heading)
        } else if follows.is_some()
            && !trimmed.is_empty()
            && (trimmed.chars().all(|next| next == '=') || trimmed.chars().all(|next| next == '-'))
        {
            follows.map(|before| before.text.trim())
        } else if follows.is_some() && line.text.starts_with(": ") {
            follows.map(|before| before.text.trim())
        } else {
            None
        };
        if let Some(heading) = heading {
            let (heading, explicit) = heading_attribute(heading);
            match explicit {
                Some(id) => {
                    used.insert(id);
                }
                None => {
                    unique_id(id_from_content(&inline_text(heading)), &mut used);
                }
            }
        }
        previous = Some(line);
    }
    used
}

// ---------------------------------------------------------------------------------------------------------------
// Links.

/// `line` with its code spans blanked out (links inside code are not links).
fn without_code_spans(line: &str) -> String {
    let mut kept = String::with_capacity(line.len());
    let mut in_code: Option<usize> = None;
    let characters: Vec<char> = line.chars().collect();
    let mut index = 0;
    while index < characters.len() {
        if characters[index] == '`' {
            let ticks = characters[index..].iter().take_while(|next| **next == '`').count();
            match in_code {
                None => {
                    let closes = (index + ticks..characters.len()).any(|start| {
                        characters[start] == '`'
                            && characters[start - 1] != '`'
                            && characters[start..].iter().take_while(|next| **next == '`').count() == ticks
                    });
                    if closes {
                        in_code = Some(ticks);
                    }
                }
                Some(open) if open == ticks => in_code = None,
                Some(_) => {}
            }
            kept.extend(std::iter::repeat_n(' ', ticks));
            index += ticks;
            continue;
        }
        kept.push(if in_code.is_some() { ' ' } else { characters[index] });
        index += 1;
    }
    kept
}

/// The link destinations of one prose line: inline links and images `[..](dest)`, reference definitions
/// `[name]: dest`, and HTML `href`/`src` attributes.
fn link_destinations(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut found = Vec::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let after = after.trim_start();
        let destination = if let Some(bracketed) = after.strip_prefix('<') {
            bracketed.split('>').next().unwrap_or("").to_string()
        } else {
            let mut depth = 0;
            let mut end = after.len();
            for (offset, character) in after.char_indices() {
                match character {
                    '(' => depth += 1,
                    ')' if depth == 0 => {
                        end = offset;
                        break;
                    }
                    ')' => depth -= 1,
                    character if character.is_whitespace() => {
                        end = offset;
                        break;
                    }
                    _ => {}
                }
            }
            after[..end].to_string()
        };
        found.push(destination);
        rest = &rest[at + 2..];
    }
    let trimmed = line.trim_start();
    if trimmed.starts_with('[') && line.len() - trimmed.len() < 4 {
        if let Some((label, destination)) = trimmed[1..].split_once("]:") {
            if !label.starts_with('^') {
                if let Some(destination) = destination.split_whitespace().next() {
                    found.push(destination.trim_start_matches('<').trim_end_matches('>').to_string());
                }
            }
        }
    }
    for attribute in ["href=\"", "src=\""] {
        let mut rest = line.as_str();
        while let Some(at) = rest.find(attribute) {
            let after = &rest[at + attribute.len()..];
            found.push(after.split('"').next().unwrap_or("").to_string());
            rest = after;
        }
    }
    found
}

fn external(destination: &str) -> bool {
    ["http://", "https://", "mailto:"].iter().any(|scheme| destination.starts_with(scheme))
}

/// `%XX` escapes decoded.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' && index + 2 < bytes.len() {
            let digits = std::str::from_utf8(&bytes[index + 1..index + 3]).unwrap_or("");
            if let Ok(value) = u8::from_str_radix(digits, 16) {
                decoded.push(value);
                index += 3;
                continue;
            }
        }
        decoded.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

/// `path` with `.` and `..` resolved lexically.
fn lexically_normal(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    normal
}

/// The chapters SUMMARY.md lists (mdBook renders only those).
fn summary_chapters() -> HashSet<PathBuf> {
    let summary = book_source().join("SUMMARY.md");
    let text = read(&summary);
    let chapter = split_chapter(&text);
    chapter
        .prose
        .iter()
        .flat_map(|line| link_destinations(line.text))
        .filter(|destination| !destination.is_empty())
        .map(|destination| lexically_normal(&book_source().join(destination)))
        .collect()
}

/// What is wrong with the links of every chapter: `file:line: link: why`, one a line.
fn broken_links() -> Vec<String> {
    let source = book_source();
    let summary = summary_chapters();
    let mut ids_of: BTreeMap<PathBuf, HashSet<String>> = BTreeMap::new();
    let mut ids = |path: &Path| -> HashSet<String> {
        ids_of.entry(path.to_path_buf()).or_insert_with(|| heading_ids(&read(path))).clone()
    };
    let mut broken = Vec::new();
    for file in chapters() {
        let text = read(&file);
        let chapter = split_chapter(&text);
        for line in &chapter.prose {
            for destination in link_destinations(line.text) {
                let at = format!("{}:{}: ({destination})", shown(&file), line.number);
                if external(&destination) {
                    continue;
                }
                if destination.is_empty() {
                    broken.push(format!("{at}: an empty link"));
                    continue;
                }
                let (path, anchor) = match destination.split_once('#') {
                    Some((path, anchor)) => (path, Some(percent_decoded(anchor))),
                    None => (destination.as_str(), None),
                };
                let target = if path.is_empty() {
                    file.clone()
                } else {
                    lexically_normal(&file.parent().unwrap().join(percent_decoded(path)))
                };
                // A link to a chapter's page names the chapter.
                let target = match target.extension() {
                    Some(extension) if extension == "html" && target.with_extension("md").is_file() => {
                        target.with_extension("md")
                    }
                    _ => target,
                };
                if !target.starts_with(&source) {
                    broken.push(format!(
                        "{at}: {} is outside docs/src, which is all the book ships; link a chapter, or name the file \
                         as `code`",
                        shown(&target)
                    ));
                    continue;
                }
                if !target.is_file() {
                    broken.push(format!("{at}: no file {}", shown(&target)));
                    continue;
                }
                let is_chapter = target.extension().is_some_and(|extension| extension == "md");
                if is_chapter && !summary.contains(&target) {
                    broken
                        .push(format!("{at}: {} is not in SUMMARY.md, so the book has no page for it", shown(&target)));
                    continue;
                }
                if let Some(anchor) = anchor {
                    if !is_chapter {
                        broken.push(format!("{at}: an anchor into {}, which is not a chapter", shown(&target)));
                    } else if !ids(&target).contains(&anchor) {
                        let mut known: Vec<String> = ids(&target).into_iter().collect();
                        known.sort();
                        broken.push(format!(
                            "{at}: {} has no heading with id `{anchor}`; its ids: {}",
                            shown(&target),
                            known.join(", ")
                        ));
                    }
                }
            }
        }
    }
    broken
}

#[test]
fn source_heading_ids_are_made_as_mdbook_makes_them() {
    let text =
        "# Flags\n\n## `lpai-net-run doctor`\n\n### When the device says no\n\n## Staging: `lpai-net-run stage`\n\n\
                ## `--perf_profile` on LPAI\n\n## Build -- settings & more\n\n## The *runtime*, v0.5\n\n## Tests\n\n\
                ## Tests\n\n```text\n## not a heading\n```\n\nSetext heading\n---\n\n## Named {#custom}\n\n\
                ## A [link](other.md#x) in it\n";
    let mut ids: Vec<String> = heading_ids(text).into_iter().collect();
    ids.sort();
    let expected = [
        "a-link-in-it",
        "build--settings--more",
        "custom",
        "flags",
        "lpai-net-run-doctor",
        "--perf_profile-on-lpai",
        "setext-heading",
        "staging-lpai-net-run-stage",
        "tests",
        "tests-1",
        "the-runtime-v05",
        "when-the-device-says-no",
    ];
    let mut expected: Vec<String> = expected.iter().map(|id| id.to_string()).collect();
    expected.sort();
    assert_eq!(ids, expected);
}

#[test]
fn source_every_internal_link_and_anchor_resolves() {
    let broken = broken_links();
    assert!(broken.is_empty(), "{} broken link(s) in the book:\n{}", broken.len(), broken.join("\n"));
}

#[test]
fn source_every_chapter_is_in_the_summary() {
    let summary = summary_chapters();
    let missing: Vec<String> = chapters()
        .into_iter()
        .filter(|chapter| !chapter.ends_with("SUMMARY.md") && !summary.contains(chapter))
        .map(|chapter| shown(&chapter))
        .collect();
    assert!(missing.is_empty(), "chapters SUMMARY.md does not list (mdBook would not render them): {missing:?}");
    for listed in &summary {
        assert!(listed.is_file(), "docs/src/SUMMARY.md lists {}, which does not exist", shown(listed));
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Fenced blocks.

/// The languages a non-command block may have.
const OTHER_LANGUAGES: [&str; 5] = ["text", "rust", "c", "json", "toml"];

/// What is wrong with a block's info string or first line (none: it follows the conventions).
fn block_convention_error(block: &Block) -> Option<String> {
    let words: Vec<&str> = block.info.split_whitespace().collect();
    match words.as_slice() {
        ["sh", "tested"] => None,
        ["sh", "device"] => {
            let first = block.text.lines().next().unwrap_or("");
            (!first.starts_with("# needs a device")).then(|| {
                format!(
                    "a ```sh device block must start with a `# needs a device` comment line; it starts with `{first}`"
                )
            })
        }
        ["sh"] => Some(
            "a bare ```sh block: mark it ```sh tested (the book test runs it) or ```sh device (it needs a device; \
             first line `# needs a device ...`)"
                .into(),
        ),
        ["sh" | "bash" | "shell" | "console" | "zsh", ..] => Some(format!(
            "```{}: command blocks are ```sh tested or ```sh device (first line `# needs a device ...`)",
            block.info
        )),
        [] => Some(format!(
            "a block with no language: mark it ```sh tested, ```sh device or ```{}",
            OTHER_LANGUAGES.join(", ```")
        )),
        [language] if OTHER_LANGUAGES.contains(language) => None,
        _ => Some(format!(
            "```{}: a block is ```sh tested, ```sh device or ```{}",
            block.info,
            OTHER_LANGUAGES.join(", ```")
        )),
    }
}

#[test]
fn source_every_fenced_block_follows_the_conventions() {
    let mut errors = Vec::new();
    for file in chapters() {
        let text = read(&file);
        let chapter = split_chapter(&text);
        if let Some(line) = chapter.unclosed {
            errors.push(format!("{}:{line}: a code block that is never closed", shown(&file)));
        }
        for block in &chapter.blocks {
            if let Some(error) = block_convention_error(block) {
                errors.push(format!("{}:{}: {error}", shown(&file), block.line));
            }
            if help_marker(&block.line_before).is_some() && block.info != "text" {
                errors.push(format!("{}:{}: a help block must be ```text", shown(&file), block.line));
            }
        }
        // A help marker must sit right before its block.
        for line in &chapter.prose {
            if help_marker(line.text).is_some() {
                let before_block = chapter.blocks.iter().any(|block| block.line == line.number + 1);
                if !before_block {
                    errors.push(format!(
                        "{}:{}: `{}` must be on the line right before its ```text block",
                        shown(&file),
                        line.number,
                        line.text.trim()
                    ));
                }
            }
        }
    }
    assert!(
        errors.is_empty(),
        "{} block(s) break the book's conventions (docs/, handoff rules):\n{}",
        errors.len(),
        errors.join("\n")
    );
}

#[test]
fn source_the_block_rules_refuse_what_they_must() {
    let block =
        |info: &str, text: &str| Block { line: 1, info: info.into(), text: text.into(), line_before: String::new() };
    assert!(block_convention_error(&block("sh tested", "ls\n")).is_none());
    assert!(block_convention_error(&block("sh device", "# needs a device: adb\nadb devices\n")).is_none());
    assert!(block_convention_error(&block("text", "output\n")).is_none());
    assert!(block_convention_error(&block("sh", "ls\n")).unwrap().contains("bare ```sh"));
    assert!(block_convention_error(&block("sh device", "adb devices\n")).unwrap().contains("# needs a device"));
    assert!(block_convention_error(&block("", "ls\n")).is_some());
    assert!(block_convention_error(&block("bash", "ls\n")).is_some());
    let chapter = split_chapter("a\n\n- item\n\n  ```sh tested\n  echo hi\n  ```\n\n````text\n```\n````\n");
    assert_eq!(chapter.blocks.len(), 2);
    assert_eq!((chapter.blocks[0].line, chapter.blocks[0].text.as_str()), (5, "echo hi\n"));
    assert_eq!(chapter.blocks[1].text, "```\n");
}

// ---------------------------------------------------------------------------------------------------------------
// Help blocks.

/// The ARGS of a `<!-- help: ARGS -->` line.
fn help_marker(line: &str) -> Option<&str> {
    line.trim().strip_prefix("<!-- help:")?.strip_suffix("-->").map(str::trim)
}

/// Every help block: (file, line of its marker, ARGS, the block's text).
fn help_blocks() -> Vec<(PathBuf, usize, String, String)> {
    let mut found = Vec::new();
    for file in chapters() {
        let text = read(&file);
        for block in split_chapter(&text).blocks {
            if let Some(arguments) = help_marker(&block.line_before) {
                found.push((file.clone(), block.line - 1, arguments.to_string(), block.text));
            }
        }
    }
    found
}

/// What `lpai-net-run ARGS` prints for a help request, from the command line's definitions (the same dispatch as
/// `cli::parse_invocation`: a command's name first selects that command).
fn help_text(arguments: &str) -> String {
    let mut words: Vec<&str> = arguments.split_whitespace().collect();
    let command = words.first().copied();
    if matches!(command, Some("inspect" | "chart" | "stage" | "doctor" | "render-log")) {
        words.remove(0);
    }
    let argv = std::iter::once("lpai-net-run").chain(words);
    let error = match command {
        Some("inspect") => cli::inspect::InspectOptions::try_parse_from(argv).err(),
        Some("chart") => cli::chart::ChartOptions::try_parse_from(argv).err(),
        Some("stage") => cli::stage::StageOptions::try_parse_from(argv).err(),
        Some("doctor") => cli::doctor::DoctorOptions::try_parse_from(argv).err(),
        Some("render-log") => cli::render_log::RenderLogOptions::try_parse_from(argv).err(),
        _ => cli::Options::try_parse_from(argv).err(),
    };
    let error = error.unwrap_or_else(|| panic!("`lpai-net-run {arguments}` parses as a run, not a help request"));
    error.to_string()
}

/// `file` with each help block replaced by what its ARGS print.
fn with_help_blocks_updated(file: &Path) -> String {
    let text = read(file);
    let mut updated = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        updated.push_str(line);
        updated.push('\n');
        let Some(arguments) = help_marker(line) else { continue };
        if lines.peek().is_some_and(|next| next.trim() == "```text") {
            updated.push_str(lines.next().unwrap());
            updated.push('\n');
            for skipped in lines.by_ref() {
                if skipped.trim() == "```" {
                    break;
                }
            }
            updated.push_str(&help_text(arguments));
            updated.push_str("```\n");
        }
    }
    updated
}

fn updating() -> bool {
    std::env::var_os("LPAI_BOOK_UPDATE").is_some_and(|value| value == "1")
}

#[test]
fn source_help_blocks_equal_lpai_net_run_help() {
    let blocks = help_blocks();
    let flags = book_source().join("reference/flags.md");
    for arguments in ["--help", "inspect --help", "stage --help", "doctor --help", "chart --help", "render-log --help"]
    {
        assert!(
            blocks.iter().any(|(file, _, args, _)| *file == flags && args == arguments),
            "docs/src/reference/flags.md has no `<!-- help: {arguments} -->` block"
        );
    }
    let mut mismatches = Vec::new();
    for (file, line, arguments, text) in &blocks {
        let expected = help_text(arguments);
        if *text != expected {
            mismatches.push(format!(
                "{}:{line}: the block differs from `lpai-net-run {arguments}`; it should be:\n```text\n{expected}```",
                shown(file)
            ));
        }
    }
    if updating() && !mismatches.is_empty() {
        let files: HashSet<&PathBuf> = blocks.iter().map(|(file, ..)| file).collect();
        for file in files {
            std::fs::write(file, with_help_blocks_updated(file)).unwrap();
        }
        return;
    }
    assert!(
        mismatches.is_empty(),
        "{} help block(s) out of date (LPAI_BOOK_UPDATE=1 cargo test --test book source_ rewrites them):\n{}",
        mismatches.len(),
        mismatches.join("\n\n")
    );
}

// ---------------------------------------------------------------------------------------------------------------
// Generated tables.

const AEE_START: &str = "<!-- aee-table:start -->";
const AEE_END: &str = "<!-- aee-table:end -->";

/// A table cell's text with the characters a markdown table cannot hold escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The AEE code tables of docs/src/reference/aee.md, from `lpai_direct_idl::aee`.
fn aee_table() -> String {
    use lpai_direct_idl::aee;
    let mut table = String::new();
    table.push_str(
        "Codes the DSP side answers with its offset (`0x80000400 + code`) and the FastRPC library on the host \
         without it:\n\n| code | from the DSP | name | meaning |\n| --- | --- | --- | --- |\n",
    );
    for (code, name, meaning) in aee::OFFSET_CODES {
        let from_dsp = aee::dsp(*code) as u32;
        writeln!(table, "| `0x{code:03X}` | `0x{from_dsp:08X}` | `{name}` | {} |", cell(meaning)).unwrap();
    }
    table.push_str(
        "\nCodes without the offset, the same on either side:\n\n| code | name | meaning |\n| --- | --- | --- |\n",
    );
    let success = (aee::SUCCESS, aee::describe(aee::SUCCESS));
    let unknown = (u32::MAX, aee::describe(u32::MAX));
    let plain = aee::PLAIN_CODES.iter().map(|(code, name, meaning)| (*code, Some((*name, *meaning))));
    for (code, described) in std::iter::once(success).chain(plain).chain(std::iter::once(unknown)) {
        let (name, meaning) = described.expect("a code the table describes");
        let shown =
            if code == u32::MAX { "`-1` (`0xFFFFFFFF`)".to_string() } else { format!("`{code}` (`0x{code:X}`)") };
        writeln!(table, "| {shown} | `{name}` | {} |", cell(meaning)).unwrap();
    }
    table
}

/// The text between a file's `start` and `end` markers (its lines after the start line, before the end line).
fn between_markers(text: &str, start: &str, end: &str, file: &Path) -> (usize, usize) {
    let begin = text.find(start).unwrap_or_else(|| panic!("{} has no `{start}` line", shown(file)));
    let after_start = begin + start.len() + 1;
    let finish =
        text[after_start..].find(end).unwrap_or_else(|| panic!("{} has no `{end}` after `{start}`", shown(file)));
    (after_start, after_start + finish)
}

#[test]
fn source_the_aee_table_is_the_one_idl_src_aee_rs_holds() {
    let file = book_source().join("reference/aee.md");
    let text = read(&file);
    let (start, end) = between_markers(&text, AEE_START, AEE_END, &file);
    let expected = format!("\n{}\n", aee_table());
    if text[start..end] != expected && updating() {
        std::fs::write(&file, format!("{}{expected}{}", &text[..start], &text[end..])).unwrap();
        return;
    }
    assert!(
        text[start..end] == expected,
        "{}: the AEE table is not the one idl/src/aee.rs generates (LPAI_BOOK_UPDATE=1 cargo test --test book \
         source_ rewrites it); between the markers it should read:\n{AEE_START}{expected}{AEE_END}",
        shown(&file)
    );
    let rows = expected.lines().filter(|line| line.starts_with("| `")).count();
    let codes = lpai_direct_idl::aee::OFFSET_CODES.len() + lpai_direct_idl::aee::PLAIN_CODES.len() + 2;
    assert_eq!(rows, codes, "one row per code");
}

// ---------------------------------------------------------------------------------------------------------------
// The latency chart.

#[test]
fn source_the_latency_chart_is_the_one_its_records_draw() {
    let profiling = book_source().join("profiling");
    let runs = profiling.join("runs");
    let work = tempfile::tempdir().unwrap();
    for mode in ["direct", "traditional"] {
        let record = runs.join(mode).join("lpai_net_run.json");
        let text = read(&record);
        let value: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", shown(&record)));
        assert_eq!(value["mode"], mode, "{}: the record's mode is not its directory's", shown(&record));
        std::fs::create_dir(work.path().join(mode)).unwrap();
        std::fs::write(work.path().join(mode).join("lpai_net_run.json"), text).unwrap();
    }
    let drawn = lpai_net_run::chart::render(work.path()).unwrap();
    let committed = profiling.join("latency.svg");
    let committed_bytes = std::fs::read(&committed).unwrap_or_else(|error| panic!("{}: {error}", shown(&committed)));
    assert!(
        std::fs::read(&drawn).unwrap() == committed_bytes,
        "{} is not what `lpai-net-run chart {}` draws: run that and copy its latency.svg over it",
        shown(&committed),
        shown(&runs)
    );
}

// ---------------------------------------------------------------------------------------------------------------
// The crates' front pages.

#[test]
fn source_each_shipped_crate_front_page_points_into_the_book() {
    let front_pages = [
        ("lpai-direct", "src/lib.rs"),
        ("lpai-direct-dsp", "dsp/src/lib.rs"),
        ("lpai-direct-embed", "dsp/embed/src/lib.rs"),
        ("lpai-direct-capi", "dsp/capi/src/lib.rs"),
        ("lpai-direct-stub", "hlos-stub/lpai-direct-stub/src/lib.rs"),
        ("lpai-net-run", "hlos-stub/lpai-net-run/src/lib.rs"),
        ("lpai-net-run", "hlos-stub/lpai-net-run/src/main.rs"),
        ("lpai-direct-idl", "idl/src/lib.rs"),
    ];
    let mut errors = Vec::new();
    for (name, path) in front_pages {
        let source = read(&root().join(path));
        let docs: Vec<&str> = source.lines().take_while(|line| line.starts_with("//!")).collect();
        if docs.first().is_none_or(|first| first.trim_start_matches("//!").trim().is_empty()) {
            errors.push(format!("{path} ({name}): no `//!` first line saying what the crate is"));
            continue;
        }
        let text = docs.join("\n");
        let mut pointed = Vec::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("docs/src/") {
            let after = &rest[at..];
            let end = after.find(|character: char| !(character.is_alphanumeric() || "/._-".contains(character)));
            let chapter = after[..end.unwrap_or(after.len())].trim_end_matches('.');
            pointed.push(chapter.to_string());
            rest = &after["docs/src/".len()..];
        }
        if pointed.is_empty() {
            errors.push(format!("{path} ({name}): its front page names no chapter of the book (`docs/src/....md`)"));
        }
        for chapter in pointed {
            if !chapter.ends_with(".md") || !root().join(&chapter).is_file() {
                errors.push(format!("{path} ({name}): its front page names `{chapter}`, which is not a chapter file"));
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

// ---------------------------------------------------------------------------------------------------------------
// The tested blocks (they need the builds).

/// The builds the tested blocks use, each with the command that makes it (scripts/test.sh's build steps).
const BLOCK_ARTIFACTS: [(&str, &str); 5] = [
    ("target/release/lpai-net-run", "cargo build --release -p lpai-direct-stub -p lpai-net-run"),
    ("target/release/liblpai_direct_skel.so", "cargo build --release -p lpai-direct-dsp"),
    ("target/virtual-adsp/liblpai_direct_skel.so", "bash scripts/build-hexagon.sh"),
    ("target/virtual-adsp/lpai-pd-shell", "bash scripts/build-hexagon.sh"),
    (
        "target/aarch64-unknown-linux-gnu/release/lpai-net-run",
        "QNN_TARGET_ARCH=aarch64-oe-linux-gcc11.2 bash scripts/build-hlos.sh",
    ),
];

/// Fails, saying what to build, when a build the blocks use is missing; answers the release lpai-net-run.
fn require_builds(artifacts: &[(&str, &str)]) -> PathBuf {
    let missing: Vec<String> = artifacts
        .iter()
        .filter(|(path, _)| !root().join(path).is_file())
        .map(|(path, build)| format!("{path} is missing: {build}"))
        .collect();
    assert!(
        missing.is_empty(),
        "the book's tested blocks need the builds (scripts/test.sh's build steps):\n{}",
        missing.join("\n")
    );
    root().join("target/release/lpai-net-run")
}

/// How long one block may take.
const BLOCK_TIMEOUT: Duration = Duration::from_secs(600);

/// Runs `script` with bash -euo pipefail from the repository root: its exit status (None: timed out), stdout and
/// stderr.
fn run_block(script: &str) -> (Option<std::process::ExitStatus>, String, String) {
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join("block.sh");
    std::fs::write(&path, script).unwrap();
    let stdout_path = work.path().join("stdout");
    let stderr_path = work.path().join("stderr");
    let mut child = Command::new("bash")
        .args(["-euo", "pipefail"])
        .arg(&path)
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_path).unwrap())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("bash runs");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > BLOCK_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = |path: &Path| String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned();
    (status, output(&stdout_path), output(&stderr_path))
}

#[test]
fn tested_blocks_run_and_exit_0() {
    require_builds(&BLOCK_ARTIFACTS);
    let mut ran = 0;
    let mut failures = Vec::new();
    let mut documents = chapters();
    documents.push(readme());
    for file in documents {
        let text = read(&file);
        for block in split_chapter(&text).blocks {
            if block.info.split_whitespace().collect::<Vec<_>>() != ["sh", "tested"] {
                continue;
            }
            ran += 1;
            let (status, stdout, stderr) = run_block(&block.text);
            let failed = match status {
                Some(status) if status.success() => continue,
                Some(status) => format!("{status}"),
                None => format!("timed out after {} s", BLOCK_TIMEOUT.as_secs()),
            };
            failures.push(format!(
                "{}:{}: the block failed ({failed}):\n```sh tested\n{}```\n--- stdout:\n{stdout}\n--- stderr:\n{stderr}",
                shown(&file),
                block.line,
                block.text
            ));
        }
    }
    assert!(ran > 0, "the book has no ```sh tested block");
    assert!(failures.is_empty(), "{} of {ran} tested block(s) failed:\n\n{}", failures.len(), failures.join("\n\n"));
}

#[test]
fn tested_blocks_help_blocks_equal_the_release_binary() {
    let binary = require_builds(&BLOCK_ARTIFACTS[..1]);
    let blocks = help_blocks();
    assert!(!blocks.is_empty(), "the book has no help block");
    let mut mismatches = Vec::new();
    for (file, line, arguments, text) in blocks {
        let output = Command::new(&binary).args(arguments.split_whitespace()).output().unwrap();
        let printed = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() || printed != text {
            mismatches.push(format!(
                "{}:{line}: `target/release/lpai-net-run {arguments}` ({}) prints, unlike the block (rebuild the \
                 release binary if it is stale):\n```text\n{printed}```\nstderr: {}",
                shown(&file),
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
}

// ---------------------------------------------------------------------------------------------------------------
// The README: short, opening with the two commands, its links and blocks held like the book's.

fn readme() -> PathBuf {
    root().join("README.md")
}

/// The README's opening block: the demo, then every test (`.ci/run` runs the second).
const README_COMMANDS: &str = "./scripts/demo.sh\n./scripts/test.sh\n";

#[test]
fn source_the_readme_is_short_and_opens_with_the_two_commands() {
    let text = read(&readme());
    let lines = text.lines().count();
    assert!(lines <= 150, "README.md has {lines} lines; at most 150 (the rest belongs in the book, docs/src/)");
    let chapter = split_chapter(&text);
    let first = chapter.blocks.first().expect("README.md has no fenced block");
    assert_eq!(
        (first.info.as_str(), first.text.as_str()),
        ("sh", README_COMMANDS),
        "README.md's first block (line {}) must be exactly the two commands",
        first.line
    );
    let before: Vec<&str> = text.lines().take(first.line - 1).filter(|line| !line.trim().is_empty()).collect();
    assert_eq!(before, ["# lpai-direct"], "README.md must open with its title and then the two commands");
    let ci = read(&root().join(".ci/run"));
    assert!(ci.contains("exec ./scripts/test.sh"), ".ci/run must run the README's test command, ./scripts/test.sh");
}

#[test]
fn source_the_readme_links_and_blocks_resolve() {
    let text = read(&readme());
    let chapter = split_chapter(&text);
    let mut errors = Vec::new();
    for line in &chapter.prose {
        for destination in link_destinations(line.text) {
            if external(&destination) {
                continue;
            }
            let (path, anchor) = match destination.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (destination.as_str(), None),
            };
            let target = root().join(percent_decoded(path));
            if path.is_empty() || !target.exists() {
                errors.push(format!("README.md:{}: `{destination}`: no such file", line.number));
            } else if let Some(anchor) = anchor {
                if !heading_ids(&read(&target)).contains(anchor) {
                    errors.push(format!("README.md:{}: `{destination}`: no heading with id `{anchor}`", line.number));
                }
            }
        }
    }
    for block in chapter.blocks.iter().skip(1) {
        if let Some(error) = block_convention_error(block) {
            errors.push(format!("README.md:{}: {error}", block.line));
        }
    }
    assert!(errors.is_empty(), "README.md:\n{}", errors.join("\n"));
}
