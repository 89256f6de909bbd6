//! The built-in file tools' logic, shared by their components. Each module offers
//! `spec()` (what the model sees) and `run(workspace, args)` (the call).

#[cfg(target_os = "wasi")]
mod builtin;
pub mod common;
pub mod delete;
pub mod edit;
pub mod grep;
pub mod image;
pub mod list;
pub mod notebook;
mod parallel;
pub mod patch;
pub mod read;
pub mod search;
pub mod write;

#[cfg(test)]
mod testutil;
