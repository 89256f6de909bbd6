//! Relative link targets in converted Markdown made absolute against the page's final URL,
//! so a model can pass any link it reads straight back to fetch_url.

/// Whether `target` starts with a URL scheme (`https:`, `mailto:`, ...).
fn has_scheme(target: &str) -> bool {
    match target.find(':') {
        Some(i) if i > 0 => {
            let s = &target[..i];
            s.as_bytes()[0].is_ascii_alphabetic()
                && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        }
        _ => false,
    }
}

/// `path` with `.` and `..` segments resolved (RFC 3986, section 5.2.4).
fn remove_dots(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *seg {
            "." => {
                if last {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > 1 {
                    out.pop();
                }
                if last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    let joined = out.join("/");
    if joined.starts_with('/') { joined } else { format!("/{joined}") }
}

/// `target` resolved against `base`, an absolute http(s) URL. Targets that already have a
/// scheme, and in-page fragments, are returned as they are.
pub fn resolve(base: &str, target: &str) -> String {
    if target.is_empty() || target.starts_with('#') || has_scheme(target) {
        return target.to_string();
    }
    let Some((scheme, rest)) = base.split_once("://") else { return target.to_string() };
    if let Some(net) = target.strip_prefix("//") {
        return format!("{scheme}://{net}");
    }
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(auth_end);
    let origin = format!("{scheme}://{authority}");
    let path_end = tail.find(['?', '#']).unwrap_or(tail.len());
    let base_path = if tail[..path_end].is_empty() { "/" } else { &tail[..path_end] };
    if target.starts_with('?') {
        return format!("{origin}{base_path}{target}");
    }
    let (path, suffix) = match target.find(['?', '#']) {
        Some(i) => target.split_at(i),
        None => (target, ""),
    };
    let merged = if path.starts_with('/') {
        path.to_string()
    } else {
        let dir = &base_path[..base_path.rfind('/').map_or(0, |i| i + 1)];
        format!("{dir}{path}")
    };
    format!("{origin}{}{suffix}", remove_dots(&merged))
}

/// Rewrites the targets of Markdown links and images (`[text](target)`) outside fenced code
/// blocks to absolute URLs against `base`.
pub fn absolute(md: &str, base: &str) -> String {
    let mut out = String::with_capacity(md.len() + md.len() / 8);
    let mut fenced = false;
    for line in md.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.contains("](") {
            out.push_str(line);
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            out.push_str(&rest[..i + 2]);
            rest = &rest[i + 2..];
            let (open, inner) = match rest.strip_prefix('<') {
                Some(r) => ("<", r),
                None => ("", rest),
            };
            let end = inner.find(|c: char| c == ')' || c == '>' || c.is_whitespace()).unwrap_or(inner.len());
            out.push_str(open);
            out.push_str(&resolve(base, &inner[..end]));
            rest = &inner[end..];
        }
        out.push_str(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "https://docs.test/guide/intro.html?v=1#top";

    #[test]
    fn relative_targets_resolve_like_a_browser() {
        for (target, want) in [
            ("setup.html", "https://docs.test/guide/setup.html"),
            ("./setup.html#a", "https://docs.test/guide/setup.html#a"),
            ("../api/", "https://docs.test/api/"),
            ("../../../x", "https://docs.test/x"),
            ("/root?q=1", "https://docs.test/root?q=1"),
            ("//cdn.test/a.js", "https://cdn.test/a.js"),
            ("?page=2", "https://docs.test/guide/intro.html?page=2"),
            ("#section", "#section"),
            ("https://other.test/", "https://other.test/"),
            ("mailto:a@b.test", "mailto:a@b.test"),
            ("sub/dir/.", "https://docs.test/guide/sub/dir/"),
        ] {
            assert_eq!(resolve(BASE, target), want, "{target}");
        }
        assert_eq!(resolve("http://h.test", "a"), "http://h.test/a");
        assert_eq!(resolve("http://h.test:8080/x/", "y"), "http://h.test:8080/x/y");
    }

    #[test]
    fn markdown_links_and_images_are_rewritten_outside_code() {
        let md = "See [setup](setup.html \"Setup\") and ![logo](/img/logo.png).\n\
                  ```\nlet x = a[0](1);\n```\n[abs](https://x.test/) [frag](#f) [angle](<../a b>)\n";
        assert_eq!(
            absolute(md, BASE),
            "See [setup](https://docs.test/guide/setup.html \"Setup\") and ![logo](https://docs.test/img/logo.png).\n\
             ```\nlet x = a[0](1);\n```\n[abs](https://x.test/) [frag](#f) [angle](<https://docs.test/a b>)\n"
        );
    }
}
