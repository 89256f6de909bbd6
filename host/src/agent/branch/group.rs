//! Running the `branch` calls of one reply: up to [`MAX_CONCURRENT`] at once on the loop's
//! thread (they wait on the model), their events passed on to the observer as they come.

use super::{BranchEvent, MAX_CONCURRENT, Parent};
use crate::agent::{Agent, CallOutcome, Observer, Stats, SummaryCall};
use crate::llm::ToolCall;
use futures_util::StreamExt;

impl Agent<'_> {
    /// Runs `branch` calls, up to [`MAX_CONCURRENT`] at once on this thread (they
    /// wait on the model), passing their events on as they come. None when interrupted.
    pub(in crate::agent) async fn run_branches(
        &self,
        group: &[ToolCall],
        stats: &mut Stats,
        obs: &mut dyn Observer,
    ) -> Option<Vec<(CallOutcome, Option<SummaryCall>)>> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let parent = Parent {
            llm: self.llm,
            tools: &self.tools,
            system: self.system_prompt(),
            defs: &self.defs,
            max_tokens: self.cfg.max_output_tokens,
            temperature: self.cfg.temperature,
            running: &self.branches,
            events: tx,
        };
        let runs = futures_util::stream::iter(group.iter().map(|c| parent.run(c)))
            .buffered(MAX_CONCURRENT)
            .collect::<Vec<_>>();
        let mut runs = std::pin::pin!(runs);
        let interrupt = self.interrupt.clone();
        let outcomes = loop {
            tokio::select! {
                r = &mut runs => break r,
                Some(e) = rx.recv() => branch_event(&e, stats, obs),
                _ = interrupt.wait() => return None,
            }
        };
        while let Ok(e) = rx.try_recv() {
            branch_event(&e, stats, obs);
        }
        Some(outcomes.into_iter().map(|o| (o, None)).collect())
    }
}

/// Counts a branch's model calls with the task's and passes the event on.
fn branch_event(e: &BranchEvent, stats: &mut Stats, obs: &mut dyn Observer) {
    if let BranchEvent::ModelCall { result, .. } = e {
        stats.llm_calls += 1;
        if let Ok(u) = result {
            crate::agent::add_usage(stats, *u);
        }
    }
    obs.branch(e);
}
