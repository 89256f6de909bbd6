//! Bindings of the imports only corral's own built-ins may have (`wit/builtin/`, package
//! `corral:builtin`; the registry refuses them to any other plugin): `parallel` (parallel.rs)
//! and `listing` (the walk's directory listings, `common::walk`). Their wasi:filesystem types
//! are the `wasip2` crate's, so a listing takes the descriptors the rest of the code holds.

wit_bindgen::generate!({
    path: "../../wit/builtin",
    world: "builtin",
    with: {
        "wasi:filesystem/types@0.2.12": wasip2::filesystem::types,
        "wasi:io/error@0.2.12": wasip2::io::error,
        "wasi:io/poll@0.2.12": wasip2::io::poll,
        "wasi:io/streams@0.2.12": wasip2::io::streams,
        "wasi:clocks/wall-clock@0.2.12": wasip2::clocks::wall_clock,
    },
});
