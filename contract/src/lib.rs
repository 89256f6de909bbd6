//! The rules corral's host and its guest SDK both implement, written once: capability names,
//! error kinds and the text of a failed call, lexical path normalisation, shell words, the
//! skill-name rule, `SKILL.md`'s front matter and the char-boundary cut. No bindings and no
//! dependencies, so the host (native) and the plugins workspace (wasm32-wasip2) both
//! path-depend on it.

pub mod capability;
pub mod error;
pub mod frontmatter;
pub mod paths;
pub mod skill;
pub mod text;
pub mod words;

pub use capability::Capability;
pub use error::ErrorKind;
