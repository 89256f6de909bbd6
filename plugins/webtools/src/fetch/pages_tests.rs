//! fetch_url on real saved pages (tests/data/pages, see its README): the main content comes
//! first, navigation is gone, the outline lists the headings; and the prompt path's result.

use super::*;
use crate::untrusted::END;
use corral_plugin_sdk::host::{FakeHostInfo, FakeNet};

fn saved(name: &str) -> Vec<u8> {
    let path = format!("{}/../../tests/data/pages/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn fetch(name: &str, args: Value) -> String {
    let url = format!("https://pages.test/{name}");
    let net = FakeNet::new().page(&url, 200, "text/html; charset=utf-8", &saved(name));
    let mut args = args;
    args["url"] = json!(url);
    run(&net, &FakeHostInfo::new(&[]), &args).unwrap().text
}

/// The body of a wrapped result: what follows the header's blank line.
fn body(text: &str) -> &str {
    text.split_once("\n\n").map_or("", |(_, b)| b)
}

/// Checks one saved page: the content (after the title and byline lines) starts with the
/// article's first paragraph, and no navigation text is left.
fn check(name: &str, title: &str, first_paragraph: &str, navigation: &[&str]) -> String {
    let src = String::from_utf8_lossy(&saved(name)).into_owned();
    for nav in navigation {
        assert!(src.contains(nav), "{name}: the saved page has no {nav:?}; the test would prove nothing");
    }
    let out = fetch(name, json!({}));
    assert!(out.contains("format: markdown, the page's main content"), "{out}");
    let body = body(&out);
    assert!(body.starts_with(&format!("# {title}\n\n")), "{name}: {}", &body[..body.len().min(300)]);
    let first =
        body.split("\n\n").skip(1).find(|b| !b.starts_with("By ") && !b.starts_with('#')).unwrap_or("");
    assert!(first.starts_with(first_paragraph), "{name}: the first block is {first:?}");
    for nav in navigation {
        assert!(!out.contains(nav), "{name}: navigation text {nav:?} is left in:\n{out}");
    }
    out
}

#[test]
fn an_encyclopedia_article_starts_with_its_first_paragraph_and_its_infobox_moves_after_it() {
    let out = check(
        "wikipedia-mozilla.html",
        "Mozilla - Wikipedia",
        "**Mozilla** is a [free-software](https://pages.test/wiki/Free_software",
        &[
            "Navigation menu",
            "Random article",
            "Personal tools",
            "Jump to",
            "Privacy policy",
            "What links here",
        ],
    );
    // The article is long: the preview comes with the outline, whose lines point into the file.
    let info = FakeHostInfo::new(&[]);
    let url = "https://pages.test/wikipedia-mozilla.html";
    let net = FakeNet::new().page(url, 200, "text/html", &saved("wikipedia-mozilla.html"));
    let preview = run(&net, &info, &json!({"url": url})).unwrap().text;
    assert_eq!(preview, out);
    assert!(preview.contains("[This is a preview"), "{preview}");
    let saved_file = &info.saved.borrow()[0].1;
    let lines: Vec<&str> = saved_file.lines().collect();
    let outline = preview.split_once("[outline: ").expect("an outline").1;
    for (n, heading) in [(0, "## History"), (0, "#### Rust"), (0, "## See also")].map(|(_, h)| {
        let entry = outline.lines().find(|l| l.ends_with(&format!(": {h}"))).unwrap_or_else(|| panic!("{h}"));
        (entry.split(':').next().unwrap().parse::<usize>().unwrap(), h)
    }) {
        assert_eq!(lines[n - 1], heading, "the outline's line {n} is the heading in the saved file");
    }
    assert!(
        !saved_file.contains("[edit]") && !saved_file.contains("\n## Contents\n"),
        "no edit links, no TOC"
    );
    let infobox = saved_file.find("| Industry").expect("the infobox is kept");
    assert!(infobox > saved_file.find("**Mozilla** is a").unwrap(), "after the first paragraph");
}

#[test]
fn a_documentation_page_drops_its_table_of_contents_and_keeps_code() {
    let out = check(
        "mercurial-evolve-docs.html",
        "Evolve: Shared Mutable History — evolve extension for Mercurial",
        "Once you have mastered the art of mutable history in a single repository",
        &["Created using", "Evolve: Concepts"],
    );
    assert!(!out.contains("](#sharing-with-a-single-developer)"), "the in-page contents list is gone");
    assert!(out.contains("\n## Sharing with a single developer\n"), "{out}");
    assert!(out.contains("```\n$ hg init public\n"), "code blocks are kept: {out}");
}

#[test]
fn a_news_article_has_its_byline_and_no_site_chrome() {
    let out = check(
        "firefox-nightly-news.html",
        "These Weeks in Firefox: Issue 85 – Firefox Nightly News",
        "- [Here’s our Firefox Year in Review!](https://blog.mozilla.org/",
        &["Leave a Reply", "Recent Posts", "Portions of this content", "Mozilla Foundation"],
    );
    assert!(body(&out).contains("\n\nBy Mike Conley · Firefox Nightly News\n\n### Highlights\n"), "{out}");
}

#[test]
fn a_technical_post_keeps_code_and_headings_without_permalink_marks() {
    let out = check(
        "v8-standalone-wasm.html",
        "standalone WebAssembly binaries using Emscripten · V8",
        "Emscripten has always focused first and foremost on compiling to the Web",
        &["Except as otherwise noted", "JS/Wasm features", "Show navigation"],
    );
    assert!(out.contains("\n## Using standalone mode in Emscripten\n"), "{out}");
    assert!(out.contains("```\nemcc -O3 add.c -o add.wasm\n```"), "{out}");
}

#[test]
fn the_whole_page_and_text_formats_are_still_there() {
    let page = fetch("v8-standalone-wasm.html", json!({"format": "page"}));
    assert!(page.contains("format: markdown, the whole page converted from HTML"), "{page}");
    assert!(page.contains("JS/Wasm features"), "the whole page keeps the navigation");
    let text = fetch("v8-standalone-wasm.html", json!({"format": "text"}));
    assert!(text.contains("format: text, the page's main content"), "{text}");
    assert!(
        body(&text).starts_with("standalone WebAssembly binaries using Emscripten · V8\n\nEmscripten has"),
        "{text}"
    );
    assert!(!text.contains("JS/Wasm features") && !text.contains("](http"), "{text}");
}

#[test]
fn with_a_prompt_the_content_is_capped_for_the_host_and_never_saved() {
    let info = FakeHostInfo::new(&[]);
    let url = "https://pages.test/wikipedia-mozilla.html";
    let net = FakeNet::new().page(url, 200, "text/html", &saved("wikipedia-mozilla.html"));
    let out = run(&net, &info, &json!({"url": url, "prompt": "When was Mozilla founded?"})).unwrap();
    assert!(info.saved.borrow().is_empty(), "nothing is spilled to a file");
    assert!(out.truncated && out.text.len() < PROMPT_CONTENT_BYTES + 2048, "{}", out.text.len());
    assert!(out.text.contains("**Mozilla** is a") && out.text.ends_with(END), "{}", out.text);
    let e = run(&net, &info, &json!({"url": url, "prompt": "x".repeat(MAX_PROMPT_CHARS + 1)})).unwrap_err();
    assert!(e.message.contains("'prompt' is longer than"), "{}", e.message);
}
