//! More calls of this component side by side, through the import only corral's built-ins may
//! have (`wit/builtin/parallel.wit`; the registry refuses it to any other plugin). Each call
//! runs in a fresh instance with this call's grants and view, and ends before this call's
//! deadline. Natively (unit tests) nothing runs beside the call: width 1.

/// How many calls [`run`] runs at the same time; 1 inside a call it started, and natively.
pub fn width() -> usize {
    #[cfg(target_os = "wasi")]
    {
        usize::try_from(crate::builtin::corral::builtin::parallel::width()).unwrap_or(1).max(1)
    }
    #[cfg(not(target_os = "wasi"))]
    {
        1
    }
}

/// Runs each `(name, args-json)` of `calls` in a fresh instance, at most [`width`] at a time:
/// the text of each call's output, or its error as `kind: message`, in order. A call the host
/// did not start is such an error; the caller does that part itself.
pub fn run(calls: &[(String, String)]) -> Vec<Result<String, String>> {
    #[cfg(target_os = "wasi")]
    {
        crate::builtin::corral::builtin::parallel::run(calls)
    }
    #[cfg(not(target_os = "wasi"))]
    {
        calls.iter().map(|_| Err("other: nothing runs beside a call outside corral".to_string())).collect()
    }
}
