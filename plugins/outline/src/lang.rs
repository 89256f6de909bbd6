//! The languages `outline` parses: which file is which language, its tree-sitter grammar, and
//! the node kinds that are items (classes, functions, methods, types) in that grammar.

use std::path::Path;

/// A language with a grammar compiled into the component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    C,
    Cpp,
    Java,
}

/// What the tool's description and refusals name as supported.
pub const SUPPORTED: &str = "Rust, Python, JavaScript, TypeScript, Go, C, C++ and Java";

impl Lang {
    /// The language of `path`, by its extension. A `.h` header is C unless its text uses C++
    /// (`class`, `namespace`, `template`, `::`), since both languages use that extension.
    pub fn of(path: &Path, text: &str) -> Option<Lang> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "rs" => Lang::Rust,
            "py" | "pyi" | "pyw" => Lang::Python,
            "js" | "mjs" | "cjs" | "jsx" => Lang::JavaScript,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "go" => Lang::Go,
            "c" => Lang::C,
            "h" if looks_like_cpp(text) => Lang::Cpp,
            "h" => Lang::C,
            "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" | "ipp" | "tpp" => Lang::Cpp,
            "java" => Lang::Java,
            _ => return None,
        })
    }

    /// Whether `path` has an extension [`Lang::of`] knows (without reading the file).
    pub fn known_extension(path: &Path) -> bool {
        Lang::of(path, "").is_some()
    }

    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "Rust",
            Lang::Python => "Python",
            Lang::JavaScript => "JavaScript",
            Lang::TypeScript => "TypeScript",
            Lang::Tsx => "TSX",
            Lang::Go => "Go",
            Lang::C => "C",
            Lang::Cpp => "C++",
            Lang::Java => "Java",
        }
    }

    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::C => tree_sitter_c::LANGUAGE.into(),
            Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
        }
    }

    /// The node kinds that are always items. Others are items only in context (see
    /// `items::classify`): a JavaScript variable holding a function, a C declaration of a
    /// function, a Python assignment at module level, a C struct with a body.
    pub fn item_kinds(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => &[
                "function_item",
                "function_signature_item",
                "struct_item",
                "enum_item",
                "union_item",
                "trait_item",
                "impl_item",
                "mod_item",
                "type_item",
                "const_item",
                "static_item",
                "macro_definition",
            ],
            Lang::Python => &["class_definition", "function_definition"],
            Lang::JavaScript => &[
                "function_declaration",
                "generator_function_declaration",
                "class_declaration",
                "method_definition",
            ],
            Lang::TypeScript | Lang::Tsx => &[
                "function_declaration",
                "generator_function_declaration",
                "class_declaration",
                "abstract_class_declaration",
                "method_definition",
                "interface_declaration",
                "type_alias_declaration",
                "enum_declaration",
                "internal_module",
                "module",
                "function_signature",
                "method_signature",
                "abstract_method_signature",
            ],
            Lang::Go => {
                &["function_declaration", "method_declaration", "type_spec", "method_elem", "method_spec"]
            }
            Lang::C => &["function_definition", "type_definition"],
            Lang::Cpp => &[
                "function_definition",
                "type_definition",
                "class_specifier",
                "namespace_definition",
                "alias_declaration",
                "concept_definition",
            ],
            Lang::Java => &[
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "annotation_type_declaration",
                "method_declaration",
                "constructor_declaration",
                "compact_constructor_declaration",
            ],
        }
    }
}

/// Whether a `.h` file's text is C++: a word only C++ has, at the start of a line.
fn looks_like_cpp(text: &str) -> bool {
    text.lines().take(5000).any(|line| {
        let l = line.trim_start();
        l.starts_with("class ")
            || l.starts_with("namespace ")
            || l.starts_with("template") && l["template".len()..].trim_start().starts_with('<')
            || l.starts_with("using namespace ")
            || l.starts_with("public:")
            || l.starts_with("private:")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_name_their_language() {
        let of = |p: &str| Lang::of(Path::new(p), "").map(Lang::name);
        assert_eq!(of("a/b.rs"), Some("Rust"));
        assert_eq!(of("x.PY"), Some("Python"));
        assert_eq!(of("x.mjs"), Some("JavaScript"));
        assert_eq!(of("x.ts"), Some("TypeScript"));
        assert_eq!(of("x.tsx"), Some("TSX"));
        assert_eq!(of("x.go"), Some("Go"));
        assert_eq!(of("x.c"), Some("C"));
        assert_eq!(of("x.hpp"), Some("C++"));
        assert_eq!(of("X.java"), Some("Java"));
        assert_eq!(of("x.rb"), None);
        assert_eq!(of("Makefile"), None);
    }

    #[test]
    fn a_header_is_cpp_only_when_its_text_is() {
        let h = Path::new("x.h");
        assert_eq!(Lang::of(h, "struct a { int b; };\nint f(void);\n"), Some(Lang::C));
        assert_eq!(Lang::of(h, "#pragma once\nclass A {\npublic:\n};\n"), Some(Lang::Cpp));
        assert_eq!(Lang::of(h, "namespace n {\n}\n"), Some(Lang::Cpp));
        assert_eq!(Lang::of(h, "template <typename T>\nT f(T);\n"), Some(Lang::Cpp));
        assert_eq!(Lang::of(h, "int templates;\n"), Some(Lang::C));
    }
}
