//! Unit tests of the SSRF guard: the address table, URL host tricks, the policy's parsing,
//! and fetches against loopback servers started by the tests.

mod addr_table;
mod fetching;
mod hardening;
mod policy;
mod server;
