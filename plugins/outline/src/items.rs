//! One file's outline: its text parsed with the language's grammar, and the items (classes,
//! functions, methods, types) found in the tree, each with its 1-based line range, nesting
//! level and header (the declaration up to its body, on one line).

use crate::lang::Lang;
use tree_sitter::{Node, Parser};

/// Longest header shown, in characters.
pub const MAX_HEADER_CHARS: usize = 160;

/// One item of the outline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// 0 for a top-level item, 1 for a member of one, and so on.
    pub level: usize,
    /// First and last line, 1-based, as read_file numbers them (decorators and `export`,
    /// `template` wrappers included).
    pub start: usize,
    pub end: usize,
    pub header: String,
}

/// The outline of one file.
#[derive(Debug, Default)]
pub struct Outline {
    pub items: Vec<Item>,
    /// The first line where the parser met a syntax error, if any (the items around it may
    /// be missing or misplaced: tree-sitter recovers, it does not guess).
    pub error_line: Option<usize>,
}

/// Parses `text` as `lang` and lists its items down to `depth` levels (1: top level only).
pub fn outline(lang: Lang, text: &str, depth: usize) -> Result<Outline, String> {
    let mut parser = Parser::new();
    parser
        .set_language(&lang.grammar())
        .map_err(|e| format!("the {} grammar could not be loaded: {e}", lang.name()))?;
    let tree = parser.parse(text, None).ok_or_else(|| format!("the {} parser gave up", lang.name()))?;
    let root = tree.root_node();
    let mut out = Outline { items: Vec::new(), error_line: None };
    if root.has_error() {
        out.error_line = first_error(root).map(|n| n.start_position().row + 1);
    }
    let src = text.as_bytes();
    // Depth-first, in source order: (node, the level an item found at it would have).
    let mut stack: Vec<(Node, usize)> = vec![(root, 0)];
    while let Some((node, level)) = stack.pop() {
        let mut child_level = level;
        if let Some(shape) = classify(lang, node) {
            if level >= depth {
                continue;
            }
            out.items.push(Item {
                level,
                start: shape.span.start_position().row + 1,
                end: last_line(shape.span),
                header: header(lang, node, shape.header_from, src),
            });
            child_level = level + 1;
            if child_level >= depth {
                continue;
            }
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        stack.extend(children.into_iter().rev().map(|c| (c, child_level)));
    }
    Ok(out)
}

/// Where an item's lines start and its header begins.
struct Shape<'t> {
    span: Node<'t>,
    header_from: usize,
}

/// Whether `node` is an item, and if so its span (a wrapper such as `export`, `template <..>`
/// or decorators belongs to it) and where its header starts.
fn classify(lang: Lang, node: Node<'_>) -> Option<Shape<'_>> {
    let kind = node.kind();
    let parent_kind = node.parent().map(|p| p.kind()).unwrap_or("");
    let item = lang.item_kinds().contains(&kind)
        || match lang {
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
                kind == "variable_declarator"
                    && node.child_by_field_name("value").is_some_and(|v| {
                        matches!(
                            v.kind(),
                            "arrow_function"
                                | "function_expression"
                                | "function"
                                | "generator_function"
                                | "class"
                        )
                    })
            }
            Lang::Python => kind == "expression_statement" && parent_kind == "module" && is_assignment(node),
            Lang::C | Lang::Cpp => match kind {
                "declaration" | "field_declaration" => declares_function(node),
                "struct_specifier" | "union_specifier" | "enum_specifier" => {
                    node.child_by_field_name("body").is_some()
                        && node.child_by_field_name("name").is_some()
                        && parent_kind != "type_definition"
                }
                _ => false,
            },
            Lang::Go => kind == "type_alias",
            _ => false,
        };
    if !item {
        return None;
    }
    // A C++ class declared through `typedef` is shown by the typedef.
    if lang == Lang::Cpp && kind == "class_specifier" && parent_kind == "type_definition" {
        return None;
    }
    let mut span = node;
    let mut header_from = node.start_byte();
    // `const f = () => ...`: the whole declaration, when it declares only this.
    if kind == "variable_declarator"
        && let Some(p) = node.parent()
        && matches!(p.kind(), "lexical_declaration" | "variable_declaration")
        && p.named_child_count() == 1
    {
        span = p;
        header_from = p.start_byte();
    }
    if let Some(p) = span.parent() {
        match p.kind() {
            "export_statement" | "template_declaration" => {
                span = p;
                header_from = p.start_byte();
            }
            // Decorators count in the range; the header is the definition itself.
            "decorated_definition" => span = p,
            _ => {}
        }
    }
    Some(Shape { span, header_from })
}

/// A Python statement that assigns to one plain name (`MAX = 3`, `T: int = 0`).
fn is_assignment(stmt: Node<'_>) -> bool {
    stmt.named_child(0).is_some_and(|a| {
        a.kind() == "assignment" && a.child_by_field_name("left").is_some_and(|l| l.kind() == "identifier")
    })
}

/// A C/C++ declaration whose declarator is a function (a prototype, or a method declared in a
/// class body), through pointers and references.
fn declares_function(decl: Node<'_>) -> bool {
    let mut d = decl.child_by_field_name("declarator");
    while let Some(n) = d {
        match n.kind() {
            "function_declarator" => return true,
            "pointer_declarator" | "reference_declarator" | "attributed_declarator" => {
                d = n
                    .child_by_field_name("declarator")
                    .or_else(|| n.named_child(n.named_child_count().saturating_sub(1)));
            }
            _ => return false,
        }
    }
    false
}

/// The last line of `node`, 1-based; a node that ends at the start of a line (its text ends
/// with the line break) ends on the line before.
fn last_line(node: Node<'_>) -> usize {
    let (start, end) = (node.start_position(), node.end_position());
    if end.column == 0 && end.row > start.row { end.row } else { end.row + 1 }
}

/// The item's declaration on one line: from `from` up to its body (or the whole node when it
/// has none), brace blocks inside shown as `{…}`, whitespace runs as one space, capped.
fn header(lang: Lang, node: Node<'_>, from: usize, src: &[u8]) -> String {
    let body = node
        .child_by_field_name("body")
        .or_else(|| node.child_by_field_name("value").and_then(|v| v.child_by_field_name("body")));
    let end = body.map(|b| b.start_byte()).filter(|&e| e > from).unwrap_or(node.end_byte());
    let text = String::from_utf8_lossy(src.get(from..end).unwrap_or_default());
    let mut line = one_line(&elide_braces(&text));
    if lang == Lang::Go && matches!(node.kind(), "type_spec" | "type_alias") {
        line.insert_str(0, "type ");
    }
    cap(line)
}

/// The text with the inside of every outermost `{...}` replaced by `…`.
fn elide_braces(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '{' => {
                if depth == 0 {
                    out.push_str("{…");
                }
                depth += 1;
            }
            '}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    out.push('}');
                }
            }
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Whitespace runs (line breaks included) as one space, trimmed.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cap(line: String) -> String {
    match line.char_indices().nth(MAX_HEADER_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

/// Where the first syntax error is: down through the first erroneous child at each level (an
/// ERROR node often wraps good code before the bad part), to a MISSING node or an ERROR node
/// whose children are all sound.
fn first_error(root: Node<'_>) -> Option<Node<'_>> {
    let mut node = root;
    'down: loop {
        if node.is_missing() {
            return Some(node);
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if child.has_error() || child.is_missing() {
                node = child;
                continue 'down;
            }
        }
        return node.is_error().then_some(node);
    }
}

#[cfg(test)]
#[path = "items_tests.rs"]
mod tests;
