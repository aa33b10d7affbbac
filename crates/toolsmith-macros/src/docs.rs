//! Reading a tool's description and its parameters' descriptions from doc comments.
//!
//! Everything here works on plain strings so that it can be unit-tested without tokens.

/// A function's doc comment, split into the tool description and the parameter descriptions.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ParsedDoc {
    /// The text shown to the model: the doc comment without its `# Arguments` section.
    pub description: Option<String>,
    /// `(name, description)` for each item of the `# Arguments` section, in order.
    pub params: Vec<(String, String)>,
}

impl ParsedDoc {
    /// The description of parameter `name`, if the `# Arguments` section has one.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(n, _)| n == name).map(|(_, d)| d.as_str())
    }
}

/// Joins the values of a list of `#[doc = "..."]` attributes into the text rustdoc shows:
/// one leading space is removed from each line written with `///`, and block comments
/// (`/** ... */`) lose their `*` decoration and common indentation.
pub(crate) fn join_doc_values<S: AsRef<str>>(values: &[S]) -> String {
    let mut lines: Vec<String> = Vec::new();
    for value in values {
        let value = value.as_ref();
        if value.contains('\n') {
            lines.extend(block_comment_lines(value));
        } else {
            lines.push(value.strip_prefix(' ').unwrap_or(value).to_string());
        }
    }
    lines.join("\n")
}

/// The lines of a block doc comment's text, cleaned the way rustdoc does it.
fn block_comment_lines(value: &str) -> Vec<String> {
    let mut lines: Vec<&str> = value.lines().collect();
    while lines.first().is_some_and(|l| l.trim().is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    // ` * text` decoration on every non-blank line.
    let decorated = !lines.is_empty()
        && lines.iter().all(|l| {
            let t = l.trim_start();
            t.is_empty() || (t.starts_with('*') && !t.starts_with("**"))
        });
    let lines: Vec<String> = if decorated {
        lines
            .iter()
            .map(|l| {
                let t = l.trim_start();
                let t = t.strip_prefix('*').unwrap_or(t);
                t.strip_prefix(' ').unwrap_or(t).to_string()
            })
            .collect()
    } else {
        let indent =
            lines.iter().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min().unwrap_or(0);
        lines.iter().map(|l| l.get(indent..).unwrap_or("").to_string()).collect()
    };
    lines
}

/// Splits a doc comment into the tool description and the parameter descriptions.
///
/// The `# Arguments` section (also `# Args`, `# Parameters`, `# Params`, at any heading level,
/// with or without a trailing colon) runs up to the next heading or the end; it is removed from
/// the description and its list items become parameter descriptions. Headings inside fenced code
/// blocks are not headings.
pub(crate) fn parse_doc(text: &str) -> ParsedDoc {
    let mut kept: Vec<&str> = Vec::new();
    let mut params: Vec<(String, String)> = Vec::new();
    let mut in_args = false;
    let mut fence: Option<&str> = None;
    let mut current: Option<(String, String)> = None;

    let flush = |current: &mut Option<(String, String)>, params: &mut Vec<(String, String)>| {
        if let Some((name, desc)) = current.take() {
            let desc = desc.trim().to_string();
            if !desc.is_empty() && !params.iter().any(|(n, _)| *n == name) {
                params.push((name, desc));
            }
        }
    };

    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(marker) = fence {
            if trimmed.starts_with(marker) {
                fence = None;
            }
            if !in_args {
                kept.push(line);
            }
            continue;
        }
        if let Some(marker) = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m)) {
            fence = Some(marker);
            flush(&mut current, &mut params);
            if !in_args {
                kept.push(line);
            }
            continue;
        }
        if let Some(title) = heading(line) {
            flush(&mut current, &mut params);
            in_args = is_arguments_title(title);
            if !in_args {
                kept.push(line);
            }
            continue;
        }
        if !in_args {
            kept.push(line);
            continue;
        }
        // Inside the arguments section.
        if trimmed.is_empty() {
            flush(&mut current, &mut params);
        } else if let Some(item) = list_item(trimmed) {
            flush(&mut current, &mut params);
            current = item.map(|(n, d)| (n.to_string(), d.to_string()));
        } else if let Some((_, desc)) = current.as_mut() {
            // A continuation line (indented or lazy) of the current item.
            if !desc.is_empty() {
                desc.push(' ');
            }
            desc.push_str(line.trim());
        }
    }
    flush(&mut current, &mut params);

    ParsedDoc { description: trim_blank_lines(&kept), params }
}

/// The description of a parameter from the doc comment written on the parameter itself:
/// its lines trimmed and joined with spaces.
pub(crate) fn param_doc(text: &str) -> Option<String> {
    let joined = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
    (!joined.is_empty()).then_some(joined)
}

/// The lines joined with `\n`, without leading and trailing blank lines; `None` when empty.
fn trim_blank_lines(lines: &[&str]) -> Option<String> {
    let start = lines.iter().position(|l| !l.trim().is_empty())?;
    let end = lines.iter().rposition(|l| !l.trim().is_empty())?;
    Some(lines[start..=end].join("\n").trim_end().to_string())
}

/// The title of an ATX heading line (`# Title`, `## Title ##`), or `None`.
fn heading(line: &str) -> Option<&str> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.len() - rest.trim_start_matches('#').len();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if !(after.is_empty() || after.starts_with(' ') || after.starts_with('\t')) {
        return None;
    }
    Some(after.trim().trim_end_matches('#').trim())
}

/// Whether a heading title opens the parameters section.
fn is_arguments_title(title: &str) -> bool {
    let title = title.strip_suffix(':').unwrap_or(title).trim();
    ["arguments", "args", "parameters", "params"].iter().any(|t| title.eq_ignore_ascii_case(t))
}

/// Parses a list item of the arguments section.
///
/// Returns `None` when the line is not a list item, `Some(None)` for a list item that does not
/// name a parameter, and `Some(Some((name, description)))` otherwise. Accepted forms:
/// `` * `a` - text ``, `` - `a` - text ``, `` * `a`: text ``, `* a - text`, `* a: text`,
/// `* a (i64): text`, with `*`, `-`, `+` or `1.` bullets and `-`, `:`, `–` or `—` separators.
fn list_item(trimmed: &str) -> Option<Option<(&str, &str)>> {
    let rest = strip_bullet(trimmed)?.trim_start();
    Some(named_item(rest))
}

fn strip_bullet(line: &str) -> Option<&str> {
    for bullet in ["* ", "- ", "+ "] {
        if let Some(rest) = line.strip_prefix(bullet) {
            return Some(rest);
        }
    }
    if matches!(line, "*" | "-" | "+") {
        return Some("");
    }
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits > 0 {
        let rest = &line[digits..];
        for marker in [". ", ") "] {
            if let Some(rest) = rest.strip_prefix(marker) {
                return Some(rest);
            }
        }
    }
    None
}

fn named_item(rest: &str) -> Option<(&str, &str)> {
    let (name, after, quoted) = if let Some(inner) = rest.strip_prefix('`') {
        let close = inner.find('`')?;
        let code = inner[..close].trim();
        // `a`, `a: i64` or `a (i64)`: the name is the leading identifier.
        let name = code.split(|c: char| c == ':' || c.is_whitespace() || c == '(').next()?;
        (name, &inner[close + 1..], true)
    } else {
        let len = ident_len(rest);
        (&rest[..len], &rest[len..], false)
    };
    let name = name.strip_prefix("r#").unwrap_or(name);
    if name.is_empty() || ident_len(name) != name.len() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut after = after.trim_start();
    // An optional type in parentheses: `a (i64): text`.
    if let Some(inner) = after.strip_prefix('(') {
        after = inner.split_once(')').map_or(after, |(_, r)| r.trim_start());
    }
    for sep in ["-", ":", "–", "—"] {
        if let Some(desc) = after.strip_prefix(sep) {
            return Some((name, desc.trim()));
        }
    }
    // Without a separator only a name in backticks counts: `* foo bar` is prose.
    quoted.then_some((name, after.trim()))
}

/// The length of the identifier (ASCII letters, digits, `_`, optionally `r#`-prefixed) at the
/// start of `s`.
fn ident_len(s: &str) -> usize {
    let prefix = if s.starts_with("r#") { 2 } else { 0 };
    let body = &s[prefix..];
    let len = body.len() - body.trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_').len();
    if len == 0 { 0 } else { prefix + len }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(lines: &[&str]) -> ParsedDoc {
        parse_doc(&join_doc_values(lines))
    }

    fn params(p: &ParsedDoc) -> Vec<(&str, &str)> {
        p.params.iter().map(|(n, d)| (n.as_str(), d.as_str())).collect()
    }

    #[test]
    fn one_leading_space_is_stripped_per_line() {
        assert_eq!(join_doc_values(&[" Get me foobar.", "", "  indented"]), "Get me foobar.\n\n indented");
        assert_eq!(join_doc_values(&["no space"]), "no space");
    }

    #[test]
    fn block_comments_lose_their_decoration() {
        assert_eq!(join_doc_values(&["\n * First line.\n *\n * Second.\n "]), "First line.\n\nSecond.");
        assert_eq!(join_doc_values(&["\n    First.\n      indented\n"]), "First.\n  indented");
    }

    #[test]
    fn description_without_arguments_section() {
        let p = doc(&[" Get me foobar.", "", " # Arguments", " * `a` - apple pie", " * `b` - banana cake"]);
        assert_eq!(p.description.as_deref(), Some("Get me foobar."));
        assert_eq!(params(&p), [("a", "apple pie"), ("b", "banana cake")]);
    }

    #[test]
    fn no_doc_means_no_description() {
        assert_eq!(doc(&[]), ParsedDoc::default());
        assert_eq!(doc(&["", "   "]).description, None);
        let only_args = doc(&[" # Arguments", " * `x` - the x"]);
        assert_eq!(only_args.description, None);
        assert_eq!(params(&only_args), [("x", "the x")]);
    }

    #[test]
    fn multi_line_description_keeps_newlines_and_other_sections() {
        let p = doc(&[
            "",
            " Line one.",
            " Line two.",
            "",
            " # Arguments",
            " * `a` - apple",
            "",
            " # Returns",
            " The pie.",
            "",
        ]);
        assert_eq!(p.description.as_deref(), Some("Line one.\nLine two.\n\n# Returns\nThe pie."));
        assert_eq!(params(&p), [("a", "apple")]);
    }

    #[test]
    fn section_ends_at_any_heading() {
        let p = doc(&[" Desc.", " ## Args", " * `a` - apple", " ### Notes", " careful"]);
        assert_eq!(p.description.as_deref(), Some("Desc.\n### Notes\ncareful"));
        assert_eq!(params(&p), [("a", "apple")]);
    }

    #[test]
    fn heading_variants() {
        for title in ["# Arguments", "# Args", "# Parameters", "# Params", "## arguments", "# Arguments:", "# Args #"] {
            let p = doc(&[" Desc.", "", &format!(" {title}"), " * `a` - apple"]);
            assert_eq!(p.description.as_deref(), Some("Desc."), "{title}");
            assert_eq!(params(&p), [("a", "apple")], "{title}");
        }
        // Not a heading: no space after the hashes, or inside a code block.
        let p = doc(&[" Desc.", " #Arguments", " * `a` - apple"]);
        assert_eq!(p.description.as_deref(), Some("Desc.\n#Arguments\n* `a` - apple"));
        assert!(p.params.is_empty());
    }

    #[test]
    fn code_blocks_are_kept_and_hash_lines_in_them_are_not_headings() {
        let p = doc(&[" Desc.", "", " ```", " # Arguments", " let x = 1;", " ```", "", " # Arguments", " * `x` - ex"]);
        assert_eq!(p.description.as_deref(), Some("Desc.\n\n```\n# Arguments\nlet x = 1;\n```"));
        assert_eq!(params(&p), [("x", "ex")]);
    }

    #[test]
    fn list_item_forms() {
        let p = doc(&[
            " # Arguments",
            " * `a` - apple pie",
            " - `b` - banana cake",
            " * `c`: cherry tart",
            " * d - date loaf",
            " * e: elderberry",
            " + `f` – fig roll",
            " 1. `g` — grape",
            " * `h: i64` - ham",
            " * i (u32): ice",
            " * `j` jam without separator",
            " * `r#type` - the type",
        ]);
        assert_eq!(
            params(&p),
            [
                ("a", "apple pie"),
                ("b", "banana cake"),
                ("c", "cherry tart"),
                ("d", "date loaf"),
                ("e", "elderberry"),
                ("f", "fig roll"),
                ("g", "grape"),
                ("h", "ham"),
                ("i", "ice"),
                ("j", "jam without separator"),
                ("type", "the type"),
            ]
        );
    }

    #[test]
    fn continuation_lines_join_with_a_space() {
        let p = doc(&[
            " # Arguments",
            " * `a` - apple pie",
            "   with cream",
            "   and sugar",
            " * `b` - banana",
            " lazy continuation",
            "",
            "   after a blank line: not part of b",
            " * `c` -",
            "   on the next line",
        ]);
        assert_eq!(
            params(&p),
            [("a", "apple pie with cream and sugar"), ("b", "banana lazy continuation"), ("c", "on the next line")]
        );
    }

    #[test]
    fn prose_and_empty_items_in_the_section_are_ignored() {
        let p = doc(&[
            " # Arguments",
            " The arguments are:",
            " * just some prose",
            " * `a` -",
            " * `b` - bee",
            " * `b` - again",
        ]);
        assert_eq!(params(&p), [("b", "bee")]);
        assert_eq!(p.description, None);
        assert_eq!(p.param("b"), Some("bee"));
        assert_eq!(p.param("a"), None);
    }

    #[test]
    fn param_doc_joins_lines() {
        assert_eq!(param_doc(" first addend").as_deref(), Some("first addend"));
        assert_eq!(param_doc("first\n  addend\n").as_deref(), Some("first addend"));
        assert_eq!(param_doc(" \n "), None);
    }
}
