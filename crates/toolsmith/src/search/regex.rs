//! Regex search: each query is a regular expression matched against the tools' names,
//! descriptions and parameters (their names, descriptions and enum values), like Anthropic's
//! regex tool search.
//!
//! - Patterns use the syntax of the [`regex`](https://docs.rs/regex) crate (Perl-like, no
//!   look-around or back-references), are **case-insensitive** unless they turn it off with
//!   `(?-i)`, and `^` / `$` match at the start and end of any line.
//! - A pattern's compiled size is limited ([`MAX_PATTERN_SIZE`]); a pattern that is invalid or too
//!   large is answered with a retry that says why and what to send instead.
//! - Tools whose name matches come first, then those whose description matches, then those whose
//!   parameters match; catalogue order within each group. Matching stops as soon as enough tools
//!   are found.
//!
//! Compiling a case-insensitive pattern costs far more than scanning a catalogue (its literal
//! search tables are built for every case variant), so a pattern in which case cannot matter —
//! no uppercase letter, no flag group, no `\p` / `\x` / `\u` escape, no `[:upper:]` — is
//! compiled case-sensitively and run over a lowercased copy of the catalogue, which finds the
//! same tools (short of exotic Unicode folds such as `s` matching `ſ`).

use ::regex::{Regex, RegexBuilder};

use crate::tool::{ModelRetry, ToolDefinition};

/// The most memory one compiled pattern may use (bytes), checked by the regex compiler.
pub const MAX_PATTERN_SIZE: usize = 256 * 1024;
/// The longest pattern accepted (characters).
pub const MAX_PATTERN_LEN: usize = 1_000;

/// A compiled search pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    re: Regex,
    /// Compiled case-sensitively, for the lowercased catalogue.
    lowercase: bool,
}

impl Pattern {
    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        self.re.as_str()
    }
}

/// Whether matching `pattern` case-insensitively is the same as matching it as it is against
/// lowercased text: nothing in it names an uppercase letter or changes the flags.
fn lowercase_equivalent(pattern: &str) -> bool {
    !pattern.chars().any(char::is_uppercase)
        && !pattern.contains("\\p")
        && !pattern.contains("\\x")
        && !pattern.contains("\\u")
        && !pattern.contains("[:upper:]")
        && pattern.match_indices("(?").all(|(i, _)| matches!(pattern.as_bytes().get(i + 2), Some(b':' | b'<')))
}

/// Compiles a search pattern: case-insensitive, multi-line, size-limited. The error is the
/// message the model is sent.
pub fn compile(pattern: &str) -> Result<Pattern, ModelRetry> {
    let hint = "Send a valid regular expression (Rust regex syntax: no look-around or back-references), \
                such as `weather`, `get_.*_issue` or `^slack_`.";
    let chars = pattern.chars().count();
    if chars > MAX_PATTERN_LEN {
        return Err(ModelRetry::new(format!(
            "The search pattern is too long ({chars} characters, at most {MAX_PATTERN_LEN}). {hint}"
        )));
    }
    let lowercase = lowercase_equivalent(pattern);
    RegexBuilder::new(pattern)
        .case_insensitive(!lowercase)
        .multi_line(true)
        .size_limit(MAX_PATTERN_SIZE)
        .dfa_size_limit(2 * MAX_PATTERN_SIZE)
        .build()
        .map_err(|e| match e {
            ::regex::Error::CompiledTooBig(limit) => ModelRetry::new(format!(
                "The search pattern `{pattern}` is too large once compiled (over {limit} bytes): use a simpler one \
                 with fewer repetitions. {hint}"
            )),
            other => {
                ModelRetry::new(format!("Invalid search pattern `{pattern}`: {}. {hint}", first_line_error(&other)))
            }
        })
        .map(|re| Pattern { re, lowercase })
}

/// The regex crate's syntax errors span several lines (the pattern, a caret, the message): keep
/// them, on one line.
fn first_line_error(e: &::regex::Error) -> String {
    let text = e.to_string();
    let lines: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).collect();
    match lines.iter().rev().find(|l| l.starts_with("error:")) {
        Some(l) => l.trim_start_matches("error:").trim().to_string(),
        None => lines.join(" "),
    }
}

/// One searchable field of every tool, joined with newlines into one haystack, so that a
/// search is a single pass of the regex engine over the catalogue.
struct Field {
    haystack: String,
    /// Where each tool's text starts in the haystack; its text ends one byte (the newline)
    /// before the next tool's start.
    starts: Vec<usize>,
}

impl Field {
    fn build<'a>(texts: impl Iterator<Item = &'a str>) -> Self {
        let mut haystack = String::new();
        let mut starts = Vec::new();
        for t in texts {
            starts.push(haystack.len());
            haystack.push_str(t);
            haystack.push('\n');
        }
        Field { haystack, starts }
    }

    fn text(&self, doc: usize) -> &str {
        let end = self.starts.get(doc + 1).map_or(self.haystack.len(), |&s| s) - 1;
        &self.haystack[self.starts[doc]..end]
    }

    /// Calls `found` with each tool whose text matches, in catalogue order, until it returns
    /// `false`.
    fn matches(&self, re: &Regex, per_tool: bool, mut found: impl FnMut(usize) -> bool) {
        let n = self.starts.len();
        if per_tool {
            for doc in 0..n {
                if re.is_match(self.text(doc)) && !found(doc) {
                    return;
                }
            }
            return;
        }
        let mut from = 0;
        while from < n {
            let Some(m) = re.find_at(&self.haystack, self.starts[from]) else { return };
            let doc = self.starts.partition_point(|&s| s <= m.start()) - 1;
            let end = self.starts.get(doc + 1).map_or(self.haystack.len(), |&s| s) - 1;
            // A match that runs over the newline ending this tool's text (`\s`, `[^x]`, ...) may
            // not be one within the text alone: check the tool on its own.
            let inside = m.end() <= end && (m.start() < end || m.is_empty());
            if (inside || re.is_match(self.text(doc))) && !found(doc) {
                return;
            }
            from = doc + 1;
        }
    }
}

/// The regex index of a catalogue: its names, descriptions and parameter text, ready to scan.
pub struct RegexIndex {
    /// Names, descriptions, parameters.
    fields: [Field; 3],
    /// The same, lowercased.
    lowercased: [Field; 3],
}

impl std::fmt::Debug for RegexIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bytes: usize = self.fields.iter().map(|x| x.haystack.len()).sum();
        f.debug_struct("RegexIndex").field("tools", &self.len()).field("bytes", &bytes).finish()
    }
}

impl RegexIndex {
    /// Prepares tool definitions, in catalogue order.
    pub fn build(defs: &[ToolDefinition]) -> Self {
        let params: Vec<String> = defs.iter().map(|d| parameter_text(&d.parameters_json_schema)).collect();
        let fields = [
            Field::build(defs.iter().map(|d| d.name.as_str())),
            Field::build(defs.iter().map(|d| d.description.as_deref().unwrap_or(""))),
            Field::build(params.iter().map(String::as_str)),
        ];
        let lowercased = [0, 1, 2].map(|f: usize| {
            let field: &Field = &fields[f];
            let texts: Vec<String> = (0..field.starts.len()).map(|d| field.text(d).to_lowercase()).collect();
            Field::build(texts.iter().map(String::as_str))
        });
        RegexIndex { fields, lowercased }
    }

    /// How many tools are indexed.
    pub fn len(&self) -> usize {
        self.fields[0].starts.len()
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first `k` tools matching a compiled pattern: name matches, then description
    /// matches, then parameter matches, in catalogue order within each group.
    pub fn search(&self, pattern: &Pattern, k: usize) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        if k == 0 {
            return out;
        }
        // `\A` and `\z` anchor to the whole haystack: scan tool by tool for them.
        let re = &pattern.re;
        let per_tool = re.as_str().contains("\\A") || re.as_str().contains("\\z");
        let mut seen = vec![false; self.len()];
        let fields = if pattern.lowercase { &self.lowercased } else { &self.fields };
        for field in fields {
            field.matches(re, per_tool, |doc| {
                if !seen[doc] {
                    seen[doc] = true;
                    out.push(doc as u32);
                }
                out.len() < k
            });
            if out.len() >= k {
                break;
            }
        }
        out
    }
}

/// Parameter names, descriptions and enum values, one per line.
fn parameter_text(schema: &serde_json::Value) -> String {
    let (mut names, mut text) = (String::new(), String::new());
    super::bm25::schema_text(schema, &mut names, &mut text, 0);
    names.push_str(&text);
    names.replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn catalogue() -> Vec<ToolDefinition> {
        vec![
            ToolDefinition::new("slack_post_message", json!({"type": "object", "properties": {"channel_id": {}}}))
                .with_description("Post a new message to a Slack channel."),
            ToolDefinition::new("github_create_issue", json!({"type": "object", "properties": {"repo": {}}}))
                .with_description("Create a new issue in a GitHub repository."),
            ToolDefinition::new(
                "read_file",
                json!({"type": "object", "properties": {"path": {
                "description": "Path of the file.", "enum": ["README.md"]}}}),
            )
            .with_description("Read a file.\nReturns its text."),
            ToolDefinition::new("get_weather", json!({})),
        ]
    }

    fn names(defs: &[ToolDefinition], pattern: &str, k: usize) -> Vec<String> {
        let index = RegexIndex::build(defs);
        index.search(&compile(pattern).unwrap(), k).into_iter().map(|d| defs[d as usize].name.clone()).collect()
    }

    #[test]
    fn names_then_descriptions_then_parameters() {
        let defs = catalogue();
        assert_eq!(names(&defs, "issue", 10), ["github_create_issue"]);
        assert_eq!(names(&defs, "SLACK", 10), ["slack_post_message"]);
        assert_eq!(names(&defs, "^(github|slack)_", 10), ["slack_post_message", "github_create_issue"]);
        // "new" is only in descriptions; "file" is in a name and then in descriptions.
        assert_eq!(names(&defs, "new", 10), ["slack_post_message", "github_create_issue"]);
        assert_eq!(names(&defs, "repo|readme", 10), ["github_create_issue", "read_file"]);
        assert_eq!(names(&defs, "channel_id", 10), ["slack_post_message"]);
        assert_eq!(names(&defs, "e", 2), ["slack_post_message", "github_create_issue"]);
        assert!(names(&defs, "(?-i)SLACK", 10).is_empty());
        assert!(names(&defs, "nothing here", 10).is_empty());
    }

    #[test]
    fn anchors_and_line_ends_stay_within_one_tool() {
        let defs = catalogue();
        assert_eq!(names(&defs, "^get_", 10), ["get_weather"]);
        assert_eq!(names(&defs, "issue$", 10), ["github_create_issue"]);
        assert_eq!(names(&defs, r"\Aread", 10), ["read_file"]);
        // `\s` may cross the newline between two tools' names, but no single name holds it.
        assert!(names(&defs, r"issue\sread", 10).is_empty());
        assert!(names(&defs, r"message\s+github", 10).is_empty());
        // A newline inside one description still matches.
        assert_eq!(names(&defs, r"file\.\s+returns", 10), ["read_file"]);
    }

    #[test]
    fn patterns_where_case_cannot_matter_run_on_lowercased_text() {
        for p in ["weather", "get_.*_issue$", "(?:a|b)", "(?<name>x)", r"\w+\s\d", "[a-z]+"] {
            assert!(lowercase_equivalent(p), "{p}");
        }
        for p in ["Weather", r"\W", "(?-i)slack", "(?i)x", r"\p{lu}", r"\x41", r"\u{41}", "[[:upper:]]", r"\PL"] {
            assert!(!lowercase_equivalent(p), "{p}");
        }
        let defs = catalogue();
        for (a, b) in [("slack", "(?i)SLACK"), ("github", "GitHub"), ("^get_", "^GET_"), ("new issue", "New Issue")] {
            assert_eq!(names(&defs, a, 10), names(&defs, b, 10), "{a} / {b}");
        }
        // Turning case-insensitivity off is honoured: "Slack" in a description is not "slack".
        assert_eq!(names(&defs, "(?-i)slack", 10), ["slack_post_message"]);
        assert_eq!(names(&defs, "(?-i)Slack", 10), ["slack_post_message"]);
        assert_eq!(names(&defs, "slack channel", 10), ["slack_post_message"]);
        assert!(names(&defs, "(?-i)slack channel", 10).is_empty());
    }

    #[test]
    fn invalid_and_oversized_patterns_are_retries() {
        let err = compile("get_(weather").unwrap_err().message();
        assert!(err.contains("Invalid search pattern `get_(weather`"), "{err}");
        assert!(err.contains("unclosed group"), "{err}");
        assert!(err.contains("Send a valid regular expression"), "{err}");
        let err = compile("(?<=a)b").unwrap_err().message();
        assert!(err.contains("look-around"), "{err}");
        let err = compile("(a{1000}){1000}").unwrap_err().message();
        assert!(err.contains("too large"), "{err}");
        let err = compile(&"a".repeat(MAX_PATTERN_LEN + 1)).unwrap_err().message();
        assert!(err.contains("too long"), "{err}");
    }
}
