//! The built-in web tools' logic, shared by their components: `fetch_url` (a page as
//! markdown, text or HTML) and `web_search` (SearXNG or Brave). Both go through the host's
//! checked client ([`Net`](corral_plugin_sdk::host::Net)) and mark what they return as untrusted.

pub mod content;
pub mod convert;
pub mod fetch;
pub mod links;
pub mod pdf;
pub mod readable;
pub mod search;
pub mod untrusted;
