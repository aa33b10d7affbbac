//! HTML for the web back ends: parsing with a deadline, conversion to Markdown, and plain text
//! for pages that cannot be parsed safely.
//!
//! An HTML tree builder does work proportional to the depth of the open elements for many
//! tags, so a page of nested tags costs time quadratic in its size: a few megabytes of `<div>`
//! would keep a thread busy for minutes. Pages are therefore parsed in small pieces against a
//! deadline, and a page whose parse passes it (or whose tree is too deep to convert without
//! deep recursion) is returned as its text, read by a linear scan of its tags instead.

use std::rc::Rc;
use std::time::{Duration, Instant};

use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::tree_builder::TreeBuilderOpts;
use html5ever::{Attribute, ParseOpts};
use markup5ever_rcdom::{Node, NodeData, RcDom};
use url::Url;

/// The deepest element nesting converted to Markdown (the conversion recurses once a level).
const MAX_TREE_DEPTH: usize = 256;
/// The size of the pieces fed to the parser between two looks at the clock.
const PIECE_BYTES: usize = 4 * 1024;
/// Elements dropped with their content when HTML is converted.
pub(super) const SKIPPED_TAGS: &[&str] = &[
    "script", "style", "noscript", "template", "head", "title", "meta", "link", "iframe", "frame", "frameset",
    "object", "embed", "applet", "svg", "math", "canvas", "audio", "video", "source", "track", "map", "form", "button",
    "input", "select", "option", "textarea", "dialog", "noembed", "noframes", "xmp",
];

/// The longest a page may take to parse before it is read as text instead: well above what a
/// real page of a few megabytes takes.
const MAX_PARSE_TIME: Duration = Duration::from_secs(5);

/// The deadline of a parse that must end by `deadline`: half the time left, at most
/// [`MAX_PARSE_TIME`], so that the text of a page that takes longer can still be returned in
/// time.
pub(super) fn parse_deadline(deadline: Instant) -> Instant {
    let now = Instant::now();
    now + (deadline.saturating_duration_since(now) / 2).min(MAX_PARSE_TIME)
}

/// Parses a document, in pieces, giving up once `deadline` passes.
pub(super) fn parse(html: &str, deadline: Instant) -> Option<Rc<Node>> {
    let opts = ParseOpts {
        tree_builder: TreeBuilderOpts { scripting_enabled: true, ..Default::default() },
        ..Default::default()
    };
    let mut parser = html5ever::parse_document(RcDom::default(), opts);
    let mut rest = html;
    while !rest.is_empty() {
        if Instant::now() >= deadline {
            return None;
        }
        let mut end = rest.len().min(PIECE_BYTES);
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        parser.process(StrTendril::from_slice(&rest[..end]));
        rest = &rest[end..];
    }
    let dom = parser.finish();
    (Instant::now() < deadline).then_some(dom.document)
}

/// Converts a page to Markdown: scripts, styles, forms, embedded objects and the `<head>`
/// dropped, link and image URLs made absolute against `base`, inline (`data:`) images reduced to
/// their alt text. A page that cannot be parsed before its [parse deadline](parse_deadline) for
/// `deadline`, or is nested deeper than [`MAX_TREE_DEPTH`], is returned as its [text](to_text).
pub(super) fn to_markdown(html: &str, base: &Url, deadline: Instant) -> String {
    let deadline = parse_deadline(deadline);
    use htmd::element_handler::{HandlerResult, Handlers};
    use htmd::options::{BulletListMarker, HrStyle, Options};
    use htmd::{Element, HtmlToMarkdown};

    let Some(tree) = parse(html, deadline) else { return to_text(html) };
    if depth_exceeds(&tree, MAX_TREE_DEPTH) {
        return to_text(html);
    }
    let link_base = base.clone();
    let image_base = base.clone();
    let options = Options {
        bullet_list_marker: BulletListMarker::Dash,
        ul_bullet_spacing: 1,
        ol_number_spacing: 1,
        hr_style: HrStyle::Dashes,
        ..Options::default()
    };
    let converter = HtmlToMarkdown::builder()
        .options(options)
        .skip_tags(SKIPPED_TAGS.to_vec())
        .add_handler(vec!["a"], move |handlers: &dyn Handlers, element: Element| -> Option<HandlerResult> {
            let mut attrs: Vec<Attribute> = element.attrs.to_vec();
            attrs.retain_mut(|a| {
                if &*a.name.local != "href" {
                    return true;
                }
                match absolute(&link_base, &a.value) {
                    Some(url) => {
                        a.value = url.into();
                        true
                    }
                    // A link that leads nowhere (`javascript:`): its text only.
                    None => false,
                }
            });
            let mut element = element;
            element.attrs = &attrs;
            handlers.fallback(element)
        })
        .add_handler(vec!["img"], move |handlers: &dyn Handlers, element: Element| -> Option<HandlerResult> {
            let mut attrs: Vec<Attribute> = element.attrs.to_vec();
            let mut alt = String::new();
            let mut inline = false;
            for a in &mut attrs {
                match &*a.name.local {
                    "src" => match absolute(&image_base, &a.value) {
                        Some(url) => a.value = url.into(),
                        None => inline = true,
                    },
                    "alt" => alt = a.value.to_string(),
                    _ => {}
                }
            }
            if inline {
                return Some(alt.split_whitespace().collect::<Vec<_>>().join(" ").into());
            }
            let mut element = element;
            element.attrs = &attrs;
            handlers.fallback(element)
        })
        .build();
    converter.tree_to_markdown(&tree)
}

/// A link or image URL made absolute; `None` for one that leads nowhere useful (`javascript:`,
/// `data:`, ...). In-page anchors (`#top`) stay as they are.
fn absolute(base: &Url, href: &str) -> Option<String> {
    let href = href.trim();
    if href.starts_with('#') {
        return Some(href.to_string());
    }
    match base.join(href) {
        Ok(url) if matches!(url.scheme(), "http" | "https" | "mailto" | "ftp" | "tel") => Some(url.to_string()),
        Ok(_) => None,
        Err(_) => Some(href.to_string()),
    }
}

/// Whether a tree is nested deeper than `max`, found without recursion.
fn depth_exceeds(root: &Rc<Node>, max: usize) -> bool {
    let mut stack = vec![(Rc::clone(root), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth > max {
            return true;
        }
        stack.extend(node.children.borrow().iter().map(|c| (Rc::clone(c), depth + 1)));
    }
    false
}

/// Every node of a tree in document order, visited without recursion.
pub(super) fn descendants(root: &Rc<Node>) -> impl Iterator<Item = Rc<Node>> {
    let mut stack = vec![Rc::clone(root)];
    std::iter::from_fn(move || {
        let node = stack.pop()?;
        stack.extend(node.children.borrow().iter().rev().cloned());
        Some(node)
    })
}

/// The local name of an element.
pub(super) fn tag(node: &Node) -> Option<&str> {
    match &node.data {
        NodeData::Element { name, .. } => Some(&name.local),
        _ => None,
    }
}

/// An attribute of an element.
pub(super) fn attr(node: &Node, name: &str) -> Option<String> {
    match &node.data {
        NodeData::Element { attrs, .. } => {
            attrs.borrow().iter().find(|a| &*a.name.local == name).map(|a| a.value.to_string())
        }
        _ => None,
    }
}

/// Whether an element has a class.
pub(super) fn has_class(node: &Node, class: &str) -> bool {
    attr(node, "class").is_some_and(|c| c.split_ascii_whitespace().any(|c| c == class))
}

/// The text of a subtree, its runs of whitespace made single spaces.
pub(super) fn text(node: &Rc<Node>) -> String {
    let mut squashed = Squash::default();
    for n in descendants(node) {
        if let NodeData::Text { contents } = &n.data {
            squashed.push(&contents.borrow());
        }
    }
    squashed.out
}

/// Joins pieces of text, making runs of whitespace (within and between pieces) single spaces.
#[derive(Default)]
struct Squash {
    out: String,
    space: bool,
}

impl Squash {
    fn push(&mut self, piece: &str) {
        self.space |= piece.starts_with(char::is_whitespace);
        for (i, word) in piece.split_whitespace().enumerate() {
            if (i > 0 || self.space) && !self.out.is_empty() && !self.out.ends_with('\n') {
                self.out.push(' ');
            }
            self.out.push_str(word);
            self.space = false;
        }
        self.space |= piece.ends_with(char::is_whitespace);
    }

    fn line_break(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
        self.space = false;
    }
}

/// Block elements, which start a line in [`to_text`].
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "td",
    "th",
    "tr",
    "ul",
];

/// Elements whose content is not markup (raw text), skipped by [`to_text`] with their content.
const RAW_TEXT: &[&str] =
    &["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript", "template"];

/// The text of a page, read by one linear scan of its tags (no tree is built): tags, comments,
/// scripts, styles and other raw-text elements dropped, a line per block element, common
/// character references decoded.
pub(super) fn to_text(html: &str) -> String {
    let b = html.as_bytes();
    let mut out = Squash::default();
    let mut i = 0;
    let mut text_start = 0;
    while let Some(off) = b[i..].iter().position(|&c| c == b'<') {
        let lt = i + off;
        let Some(token) = lex_tag(b, lt) else {
            i = lt + 1;
            continue;
        };
        out.push(&decode_references(&html[text_start..lt]));
        i = token.end;
        if let Some(name) = &token.name {
            if BLOCKS.contains(&name.as_str()) {
                out.line_break();
            }
            if !token.closing && RAW_TEXT.contains(&name.as_str()) {
                i = raw_text_end(b, i, name);
            } else if !token.closing && name == "plaintext" {
                out.push(&html[i..]);
                i = b.len();
            }
        }
        text_start = i;
    }
    if text_start < b.len() {
        out.push(&decode_references(&html[text_start..]));
    }
    out.out.trim().to_string()
}

/// A tag, comment or declaration read by [`lex_tag`].
struct Token {
    /// The tag's lowercase name; `None` for a comment or declaration.
    name: Option<String>,
    closing: bool,
    /// Where the token ends (after its `>`).
    end: usize,
}

/// Reads the tag, comment or declaration starting at `b[lt] == b'<'`; `None` when the `<` is
/// text.
fn lex_tag(b: &[u8], lt: usize) -> Option<Token> {
    let rest = &b[lt + 1..];
    let find = |from: usize, pat: &[u8]| {
        b[from..].windows(pat.len()).position(|w| w == pat).map_or(b.len(), |p| from + p + pat.len())
    };
    if rest.starts_with(b"!--") {
        return Some(Token { name: None, closing: false, end: find(lt + 4, b"-->") });
    }
    if rest.first().is_some_and(|&c| c == b'!' || c == b'?') {
        return Some(Token { name: None, closing: false, end: find(lt + 1, b">") });
    }
    let closing = rest.first() == Some(&b'/');
    let name_start = lt + 1 + usize::from(closing);
    if !b.get(name_start).is_some_and(u8::is_ascii_alphabetic) {
        return closing.then(|| Token { name: None, closing: false, end: find(lt + 1, b">") });
    }
    let name_end = b[name_start..]
        .iter()
        .position(|&c| c.is_ascii_whitespace() || c == b'/' || c == b'>')
        .map_or(b.len(), |p| name_start + p);
    let name = String::from_utf8_lossy(&b[name_start..name_end]).to_ascii_lowercase();
    // The attributes: a quote opens a value only right after `=`.
    let mut j = name_end;
    let mut after_equals = false;
    while j < b.len() {
        match b[j] {
            b'>' => {
                j += 1;
                break;
            }
            q @ (b'"' | b'\'') if after_equals => {
                j = b[j + 1..].iter().position(|&c| c == q).map_or(b.len(), |p| j + 1 + p + 1);
                after_equals = false;
                continue;
            }
            b'=' => after_equals = true,
            c if c.is_ascii_whitespace() => {}
            _ => after_equals = false,
        }
        j += 1;
    }
    Some(Token { name: Some(name), closing, end: j })
}

/// Where the content of a raw-text element that starts at `from` ends: after its end tag.
fn raw_text_end(b: &[u8], from: usize, name: &str) -> usize {
    let mut k = from;
    while let Some(off) = b[k..].windows(2).position(|w| w == b"</") {
        let at = k + off;
        let candidate = &b[at + 2..];
        if candidate.len() >= name.len()
            && candidate[..name.len()].eq_ignore_ascii_case(name.as_bytes())
            && candidate.get(name.len()).is_none_or(|c| c.is_ascii_whitespace() || *c == b'>' || *c == b'/')
        {
            return b[at..].iter().position(|&c| c == b'>').map_or(b.len(), |p| at + p + 1);
        }
        k = at + 2;
    }
    b.len()
}

/// Text with the common character references decoded (`&amp;`, `&lt;`, `&#233;`, ...); others
/// are left as they are.
fn decode_references(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('&') {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest[1..].find(|c: char| !c.is_ascii_alphanumeric() && c != '#').map_or(rest.len(), |p| p + 1);
        let name = &rest[1..end];
        let decoded = match name {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some(' '),
            _ => name.strip_prefix('#').and_then(|n| {
                let code = match n.strip_prefix(['x', 'X']) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok(),
                    None => n.parse().ok(),
                };
                code.and_then(char::from_u32)
            }),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[end..];
                rest = rest.strip_prefix(';').unwrap_or(rest);
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(30)
    }

    fn base() -> Url {
        Url::parse("https://example.com/docs/page.html").unwrap()
    }

    #[test]
    fn html_becomes_markdown_with_absolute_links() {
        let md = to_markdown(
            r#"<html><head><title>T</title><style>body{color:red}</style><script>var secret = 1;</script></head>
            <body><h1>Title</h1><p>See <a href="other.html">the other page</a> and <a href="javascript:void(0)">this</a>.</p>
            <img src="/logo.png" alt="Logo"><img src="data:image/png;base64,AAAA" alt="inline">
            <noscript>enable js</noscript><form><input value="x"><button>Go</button></form></body></html>"#,
            &base(),
            soon(),
        );
        assert!(md.contains("# Title"), "{md}");
        assert!(md.contains("[the other page](https://example.com/docs/other.html)"), "{md}");
        assert!(md.contains("![Logo](https://example.com/logo.png)"), "{md}");
        assert!(md.contains("inline") && !md.contains("base64"), "{md}");
        assert!(md.contains("- ") || !md.contains("*   "), "{md}");
        assert!(md.contains("and this."), "{md}");
        for gone in ["secret", "color", "enable js", "Go"] {
            assert!(!md.contains(gone), "{gone} in {md}");
        }
    }

    /// Runs `f` on a thread with a 2 MiB stack, as Tokio's blocking threads have, and times it.
    fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> (T, Duration) {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let started = Instant::now();
                let out = f();
                (out, started.elapsed())
            })
            .unwrap()
            .join()
            .unwrap()
    }

    #[test]
    fn deep_pages_become_text_in_bounded_time() {
        for (open, close) in [
            ("<div>", "</div>"),
            ("<div/>", ""),
            ("<div></span>", ""),
            ("<span><div></span>", ""),
            ("<li><section>", ""),
            ("<svg><g>", ""),
            ("<b><i><u>", ""),
        ] {
            let page = format!(
                "<p>top</p>{}<b>bottom</b><script>hidden()</script>{}",
                open.repeat(60_000),
                close.repeat(60_000)
            );
            let deadline = Instant::now() + Duration::from_secs(1);
            let (out, took) = on_small_stack(move || to_markdown(&page, &base(), deadline));
            assert!(took < Duration::from_secs(5), "{open}: {took:?}");
            assert!(out.contains("top") && out.contains("bottom") && !out.contains("hidden"), "{open}: {out:?}");
        }
        // Nested just below the limit: converted on a small stack.
        let page = format!("{}<b>x</b>{}", "<div>".repeat(MAX_TREE_DEPTH - 4), "</div>".repeat(MAX_TREE_DEPTH - 4));
        let (out, _) = on_small_stack(move || to_markdown(&page, &base(), soon()));
        assert_eq!(out, "**x**");
    }

    #[test]
    fn a_passed_deadline_gives_text() {
        let page = "<h1>Head</h1><p>a &amp; b &lt;c&gt; &#233;&#xE9; &bogus; <!-- note --> end</p>";
        assert_eq!(to_markdown(page, &base(), Instant::now()), "Head\na & b <c> éé &bogus; end");
    }

    #[test]
    fn text_scan_skips_raw_text_and_odd_markup() {
        assert_eq!(to_text("<style>p{x:1}</style><p title='a>b'>one</p><script>if (a</b) {}</script>two"), "one\ntwo");
        assert_eq!(to_text("a < b and c<d"), "a < b and c");
        assert_eq!(to_text("<p>x</p><plaintext><b>raw</b>"), "x\n<b>raw</b>");
        assert_eq!(to_text("<div>unterminated <span"), "unterminated");
        assert_eq!(to_text("<script>never closed"), "");
        assert_eq!(to_text(""), "");
        assert_eq!(to_text("é<br>ü &"), "é\nü &");
    }

    #[test]
    fn squash_joins_pieces() {
        let mut s = Squash::default();
        for piece in ["  The ", "Rust", "  Book\n", "s", "hop"] {
            s.push(piece);
        }
        assert_eq!(s.out, "The Rust Book shop");
    }
}
