//! The `corral:builtin/parallel` import: a built-in runs more calls of itself side by side
//! (grep's parts). The runtime starts them (it owns the engine and the component); this side
//! holds the rules: no calls from a call `run` started, at most [`MAX_CALLS`] at once, a
//! refusal that says why, the calls' effects kept as the caller's, one log line per `run`.

use super::PluginCtx;
use super::effects::Effect;
use crate::wit::builtin::parallel;
use std::future::Future;
use std::pin::Pin;

/// Most calls one `run` takes.
pub const MAX_CALLS: usize = 64;

/// One call that `run` started: the text of its output, or its error as `kind: message`; and
/// what it did that the agent acts on.
pub type Ran = (Result<String, String>, Vec<Effect>);

/// Starts the calls of one plugin call's `parallel` import (`runtime/parallel.rs`).
pub trait SubCalls: Send + Sync + std::fmt::Debug {
    /// How many calls run at the same time.
    fn width(&self) -> u32;
    /// Runs `calls` (`(name, args-json)`, at most [`MAX_CALLS`]) and returns what each did,
    /// in order.
    fn run(&self, calls: Vec<(String, String)>) -> Pin<Box<dyn Future<Output = Vec<Ran>> + Send>>;
}

impl parallel::Host for PluginCtx {
    async fn width(&mut self) -> u32 {
        self.parallel.as_ref().map_or(1, |p| p.width().max(1))
    }

    async fn run(&mut self, calls: Vec<(String, String)>) -> Vec<Result<String, String>> {
        let refuse = |why: String| calls.iter().map(|_| Err(format!("other: {why}"))).collect();
        let Some(sub) = self.parallel.clone() else {
            return refuse("a call that parallel.run started cannot start more; do this part in it".into());
        };
        if calls.len() > MAX_CALLS {
            return refuse(format!(
                "parallel.run takes at most {MAX_CALLS} calls at once, got {}; split the work into fewer parts",
                calls.len()
            ));
        }
        let (asked, width) = (calls.len(), sub.width());
        let ran = sub.run(calls).await;
        let answered = ran.iter().filter(|(r, _)| r.is_ok()).count();
        let line = format!("parallel.run: {asked} calls, {answered} answered, at most {width} at a time");
        self.session.log().push(&self.plugin, "debug", &line);
        // The calls' effects are the caller's, in the calls' order.
        ran.into_iter()
            .map(|(result, effects)| {
                effects.into_iter().for_each(|e| self.effects.push(e));
                result
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::effects::Sink;
    use crate::capabilities::{PauseClock, Policy, Roots, Session, log};
    use std::sync::{Arc, Mutex};

    /// Answers each call with its name and args, and an effect named after it; records
    /// what it was asked.
    #[derive(Debug, Default)]
    struct Echo {
        asked: Mutex<Vec<(String, String)>>,
    }

    impl SubCalls for Echo {
        fn width(&self) -> u32 {
            0
        }
        fn run(&self, calls: Vec<(String, String)>) -> Pin<Box<dyn Future<Output = Vec<Ran>> + Send>> {
            self.asked.lock().unwrap().extend(calls.iter().cloned());
            let ran = calls
                .into_iter()
                .map(|(n, a)| match n.as_str() {
                    "bad" => (Err("invalid_args: no".to_string()), Vec::new()),
                    _ => (Ok(format!("{n} {a}")), vec![Effect::NotUndoable(n)]),
                })
                .collect();
            Box::pin(async move { ran })
        }
    }

    fn ctx(parallel: Option<Arc<dyn SubCalls>>) -> (tempfile::TempDir, PluginCtx) {
        let t = tempfile::tempdir().unwrap();
        let roots = Roots::open(t.path(), &[], &[]).unwrap();
        let session = Arc::new(Session::new(roots, Policy::default(), log::Sink::new(false)));
        let effects = Sink::default();
        (t, PluginCtx { plugin: "grep".into(), session, paused: PauseClock::default(), effects, parallel })
    }

    fn block<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
    }

    fn calls(names: &[&str]) -> Vec<(String, String)> {
        names.iter().map(|n| (n.to_string(), "{}".to_string())).collect()
    }

    #[test]
    fn results_and_effects_come_back_in_the_calls_order_and_the_run_is_logged() {
        let echo = Arc::new(Echo::default());
        let (_t, mut ctx) = ctx(Some(echo.clone()));
        assert_eq!(block(parallel::Host::width(&mut ctx)), 1, "never 0");
        let got = block(parallel::Host::run(&mut ctx, calls(&["a", "bad", "c"])));
        assert_eq!(got, [Ok("a {}".into()), Err("invalid_args: no".into()), Ok("c {}".into())]);
        assert_eq!(ctx.effects.take(), [Effect::NotUndoable("a".into()), Effect::NotUndoable("c".into())]);
        assert_eq!(
            ctx.session.log().lines().last().cloned(),
            Some("[grep] debug: parallel.run: 3 calls, 2 answered, at most 0 at a time".to_string())
        );
        // Past the limit nothing starts, and every call says why.
        let many = vec![("a".to_string(), "{}".to_string()); MAX_CALLS + 1];
        let got = block(parallel::Host::run(&mut ctx, many));
        assert_eq!(got.len(), MAX_CALLS + 1);
        assert!(
            got.iter().all(|r| r.as_ref().unwrap_err().contains("at most 64 calls at once, got 65")),
            "{got:?}"
        );
        assert_eq!(echo.asked.lock().unwrap().len(), 3, "the refused run reached nothing");
    }

    #[test]
    fn a_call_that_run_started_has_width_1_and_starts_nothing() {
        let (_t, mut ctx) = ctx(None);
        assert_eq!(block(parallel::Host::width(&mut ctx)), 1);
        let got = block(parallel::Host::run(&mut ctx, calls(&["a", "b"])));
        assert_eq!(got.len(), 2);
        for r in got {
            assert_eq!(
                r.unwrap_err(),
                "other: a call that parallel.run started cannot start more; do this part in it"
            );
        }
    }
}
