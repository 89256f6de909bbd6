//! BM25 (Okapi) ranking of short documents against a query, for choosing which memory
//! entries are relevant to a task. Terms are runs of ASCII letters and digits, lowercased,
//! without a few very common English words.

use std::collections::{HashMap, HashSet};

/// Term-frequency saturation.
const K1: f64 = 1.5;
/// Length normalisation.
const B: f64 = 0.75;

const STOP: [&str; 24] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on", "or",
    "that", "the", "this", "to", "was", "we", "with", "you",
];

/// The terms of `text`.
pub fn terms(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .filter(|w| !STOP.contains(&w.as_str()))
        .collect()
}

/// An index over documents.
pub struct Index {
    docs: Vec<HashMap<String, u32>>,
    lens: Vec<f64>,
    avg_len: f64,
    /// Documents containing each term.
    df: HashMap<String, u32>,
}

impl Index {
    pub fn new<S: AsRef<str>>(docs: &[S]) -> Self {
        let mut df: HashMap<String, u32> = HashMap::new();
        let mut tfs = Vec::with_capacity(docs.len());
        let mut lens = Vec::with_capacity(docs.len());
        for d in docs {
            let ts = terms(d.as_ref());
            lens.push(ts.len() as f64);
            let mut tf: HashMap<String, u32> = HashMap::new();
            for t in ts {
                *tf.entry(t).or_default() += 1;
            }
            for t in tf.keys() {
                *df.entry(t.clone()).or_default() += 1;
            }
            tfs.push(tf);
        }
        let avg_len = if lens.is_empty() { 0.0 } else { lens.iter().sum::<f64>() / lens.len() as f64 };
        Index { docs: tfs, lens, avg_len, df }
    }

    /// The inverse document frequency of `term` (always positive: rare terms weigh more).
    fn idf(&self, term: &str) -> f64 {
        let n = self.docs.len() as f64;
        let df = f64::from(self.df.get(term).copied().unwrap_or(0));
        ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
    }

    /// The score of every document for `query`; 0 for documents sharing no term with it.
    pub fn scores(&self, query: &str) -> Vec<f64> {
        let q: HashSet<String> = terms(query).into_iter().collect();
        (0..self.docs.len())
            .map(|i| {
                let norm = K1 * (1.0 - B + B * self.lens[i] / self.avg_len.max(1.0));
                q.iter()
                    .filter_map(|t| {
                        let tf = f64::from(*self.docs[i].get(t)?);
                        Some(self.idf(t) * tf * (K1 + 1.0) / (tf + norm))
                    })
                    .sum()
            })
            .collect()
    }

    /// Documents sharing a term with `query`, best first (the earlier one on ties).
    pub fn rank(&self, query: &str) -> Vec<(usize, f64)> {
        let mut r: Vec<(usize, f64)> =
            self.scores(query).into_iter().enumerate().filter(|(_, s)| *s > 0.0).collect();
        r.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_lowercase_alphanumeric_runs_without_stop_words() {
        assert_eq!(
            terms("Fix the HTTP-2 parser, then run `cargo test`!"),
            ["fix", "http", "2", "parser", "then", "run", "cargo", "test"]
        );
    }

    #[test]
    fn rarer_and_more_frequent_terms_rank_higher() {
        let docs = [
            "the build uses cargo and make",
            "parser notes: the parser rejects empty input; parser tests live in tests/parser.rs",
            "cargo test runs the whole suite",
            "deploy with docker",
        ];
        let idx = Index::new(&docs);
        let r = idx.rank("parser fails on empty input; see cargo");
        let order: Vec<usize> = r.iter().map(|(i, _)| *i).collect();
        assert_eq!(order, vec![1, 0, 2], "{r:?}");
        assert!(r[0].1 > 2.0 * r[1].1, "three query terms, one of them four times: {r:?}");
        assert!(r[1].1 > r[2].1, "one shared term: the shorter document wins: {r:?}");
        assert!(idx.rank("the").is_empty(), "stop words match nothing");
    }

    #[test]
    fn scores_follow_the_okapi_formula() {
        let idx = Index::new(&["alpha beta", "alpha alpha gamma delta"]);
        let s = idx.scores("alpha");
        // df(alpha) = 2 of 2 documents: idf = ln(0.5/2.5 + 1); avg length 3.
        let idf = (0.5f64 / 2.5 + 1.0).ln();
        let score = |tf: f64, len: f64| idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / 3.0));
        assert!((s[0] - score(1.0, 2.0)).abs() < 1e-12, "{s:?}");
        assert!((s[1] - score(2.0, 4.0)).abs() < 1e-12, "{s:?}");
        assert!(Index::new::<&str>(&[]).rank("x").is_empty());
    }
}
