use super::*;

/// Each item as `start-end<indent>header`, two spaces of indent per level.
fn show(lang: Lang, src: &str, depth: usize) -> Vec<String> {
    let o = outline(lang, src, depth).unwrap();
    o.items.iter().map(|i| format!("{}-{} {}{}", i.start, i.end, "  ".repeat(i.level), i.header)).collect()
}

#[test]
fn rust_items_nest_with_their_ranges() {
    let src = "\
use std::fmt;

/// A config.
#[derive(Debug)]
pub struct Config {
    path: String,
}

impl Config {
    pub fn new(
        path: &str,
    ) -> Self {
        Config { path: path.into() }
    }

    fn helper(&self) {}
}

pub trait Named {
    fn name(&self) -> String;
}

pub enum E { A, B }
type Alias = Vec<u8>;
const MAX: usize = 3;
mod inner {
    pub fn f() {}
}
macro_rules! m { () => {} }
";
    assert_eq!(
        show(Lang::Rust, src, 2),
        [
            "5-7 pub struct Config",
            "9-17 impl Config",
            "10-14   pub fn new( path: &str, ) -> Self",
            "16-16   fn helper(&self)",
            "19-21 pub trait Named",
            "20-20   fn name(&self) -> String;",
            "23-23 pub enum E",
            "24-24 type Alias = Vec<u8>;",
            "25-25 const MAX: usize = 3;",
            "26-28 mod inner",
            "27-27   pub fn f()",
            "29-29 macro_rules! m {…}",
        ]
    );
    // Depth 1: the top level only.
    let top = show(Lang::Rust, src, 1);
    assert_eq!(top.len(), 8, "{top:?}");
    assert!(top.iter().all(|l| !l.contains("  fn")), "{top:?}");
}

#[test]
fn python_classes_methods_decorators_and_module_assignments() {
    let src = "\
import os

MAX = 10
x.y = 3

@dataclass
class Point(Base):
    \"\"\"A point.\"\"\"
    def __init__(self, x):
        self.x = x

    @property
    def norm(self) -> float:
        def inner():
            pass
        return 0.0

async def main(argv: list[str]) -> int:
    return 0
";
    assert_eq!(
        show(Lang::Python, src, 3),
        [
            "3-3 MAX = 10",
            "6-16 class Point(Base):",
            "9-10   def __init__(self, x):",
            "12-16   def norm(self) -> float:",
            "14-15     def inner():",
            "18-19 async def main(argv: list[str]) -> int:",
        ]
    );
}

#[test]
fn javascript_functions_classes_methods_and_function_variables() {
    let src = "\
export function load(path) {
  return 1;
}
export default class Store extends Base {
  constructor(a) { this.a = a; }
  get size() { return 0; }
}
const handler = async (req, res) => {
  res.end();
};
let x = 5;
function* gen() { yield 1; }
";
    assert_eq!(
        show(Lang::JavaScript, src, 2),
        [
            "1-3 export function load(path)",
            "4-7 export default class Store extends Base",
            "5-5   constructor(a)",
            "6-6   get size()",
            "8-10 const handler = async (req, res) =>",
            "12-12 function* gen()",
        ]
    );
}

#[test]
fn typescript_interfaces_types_enums_namespaces_and_signatures() {
    let src = "\
export interface Shape {
  area(): number;
  name: string;
}
type Id = string | number;
enum Color { Red, Green }
namespace Geo {
  export function dist(a: Point, b: Point): number { return 0; }
}
abstract class Base<T> implements Shape {
  abstract area(): number;
  protected helper(x: T): void {}
}
declare function f(x: number): string;
";
    assert_eq!(
        show(Lang::TypeScript, src, 2),
        [
            "1-4 export interface Shape",
            "2-2   area(): number",
            "5-5 type Id = string | number;",
            "6-6 enum Color",
            "7-9 namespace Geo",
            "8-8   export function dist(a: Point, b: Point): number",
            "10-13 abstract class Base<T> implements Shape",
            "11-11   abstract area(): number",
            "12-12   protected helper(x: T): void",
            "14-14 function f(x: number): string;",
        ]
    );
    let tsx = "export const App = () => <div>{1}</div>;\nfunction Card(p: Props) { return <p/>; }\n";
    assert_eq!(show(Lang::Tsx, tsx, 1), ["1-1 export const App = () =>", "2-2 function Card(p: Props)"]);
}

#[test]
fn go_functions_methods_types_and_interface_methods() {
    let src = "\
package main

type Server struct {
\taddr string
}

type (
\tID int
\tReader interface {
\t\tRead(p []byte) (int, error)
\t}
)

type Alias = Server

func (s *Server) Start(ctx context.Context) error {
\treturn nil
}

func main() {}
";
    assert_eq!(
        show(Lang::Go, src, 2),
        [
            "3-5 type Server struct {…}",
            "8-8 type ID int",
            "9-11 type Reader interface {…}",
            "10-10   Read(p []byte) (int, error)",
            "14-14 type Alias = Server",
            "16-18 func (s *Server) Start(ctx context.Context) error",
            "20-20 func main()",
        ]
    );
}

#[test]
fn c_functions_prototypes_structs_and_typedefs() {
    let src = "\
#include <stdio.h>

struct point {
    int x, y;
};

typedef struct {
    int w;
} size_t2;

int area(struct point *p);
static char *name(void);

int main(int argc, char **argv) {
    return 0;
}

#ifdef X
void guarded(void) {}
#endif
";
    assert_eq!(
        show(Lang::C, src, 2),
        [
            "3-5 struct point",
            "7-9 typedef struct {…} size_t2;",
            "11-11 int area(struct point *p);",
            "12-12 static char *name(void);",
            "14-16 int main(int argc, char **argv)",
            "19-19 void guarded(void)",
        ]
    );
}

#[test]
fn cpp_namespaces_classes_templates_and_methods() {
    let src = "\
namespace geo {
class Shape {
public:
    virtual double area() const = 0;
    int id() const { return id_; }
private:
    int id_;
};

template <typename T>
T clamp(T v, T lo, T hi) {
    return v;
}
}

double geo::Circle::area() const { return 1.0; }
using Id = long;
";
    assert_eq!(
        show(Lang::Cpp, src, 3),
        [
            "1-14 namespace geo",
            "2-8   class Shape",
            "4-4     virtual double area() const = 0;",
            "5-5     int id() const",
            "10-13   template <typename T> T clamp(T v, T lo, T hi)",
            "16-16 double geo::Circle::area() const",
            "17-17 using Id = long;",
        ]
    );
}

#[test]
fn java_classes_interfaces_constructors_and_methods() {
    let src = "\
package a;

public class Main {
    private int x;

    public Main(int x) {
        this.x = x;
    }

    @Override
    public String toString() {
        return \"\";
    }

    interface Visitor<T> {
        T visit(Node n);
    }

    enum Mode { ON, OFF }
    record Pair(int a, int b) {}
}
";
    assert_eq!(
        show(Lang::Java, src, 3),
        [
            "3-21 public class Main",
            "6-8   public Main(int x)",
            "10-13   @Override public String toString()",
            "15-17   interface Visitor<T>",
            "16-16     T visit(Node n);",
            "19-19   enum Mode",
            "20-20   record Pair(int a, int b)",
        ]
    );
}

#[test]
fn syntax_errors_are_reported_with_their_line_and_the_rest_still_outlined() {
    let src = "fn ok() {}\n\nfn broken( {\n\nstruct After;\n";
    let o = outline(Lang::Rust, src, 2).unwrap();
    assert_eq!(o.error_line, Some(3));
    assert_eq!(o.items.first().map(|i| i.header.as_str()), Some("fn ok()"));
    let clean = outline(Lang::Rust, "fn ok() {}\n", 2).unwrap();
    assert_eq!(clean.error_line, None);
}

#[test]
fn headers_are_one_line_and_capped() {
    let long =
        format!("fn f({}) {{}}\n", (0..100).map(|i| format!("a{i}: u8")).collect::<Vec<_>>().join(", "));
    let o = outline(Lang::Rust, &long, 1).unwrap();
    let h = &o.items[0].header;
    assert_eq!(h.chars().count(), MAX_HEADER_CHARS + 1);
    assert!(h.ends_with('…') && h.starts_with("fn f(a0: u8, a1: u8"));
    assert_eq!(elide_braces("struct {a {b} c} x { y }"), "struct {…} x {…}");
    assert_eq!(one_line(" a\r\n\t b  "), "a b");
}

#[test]
fn line_numbers_count_newlines_only_as_read_file_does() {
    // A form feed and U+2028 are not line breaks; CRLF is one.
    let src = "\u{c}\nfn a() {}\r\n// \u{2028} x\nfn b() {}\n";
    assert_eq!(show(Lang::Rust, src, 1), ["2-2 fn a()", "4-4 fn b()"]);
}
