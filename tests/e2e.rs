//! Every end-to-end suite in one test binary: one link of corral and wasmtime instead of one
//! per suite. Each suite is a module (`cargo test --test e2e agent::` runs one); they drive the
//! real `corral` binary through `support`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout, clippy::print_stderr)]

mod support;

mod agent;
mod authoring;
mod backlog;
mod branch;
mod build;
mod ci;
mod cli;
mod commands;
mod confinement;
mod context;
mod cron;
mod docs;
mod examples;
mod faults;
mod grants;
mod llm;
mod mcp_client;
mod mcp_serve;
mod outline;
mod parallel;
mod providers;
mod sandbox;
mod session;
mod sessions;
mod skills;
mod ssrf;
mod trust;
mod undo;
mod web;
