//! A job's schedule: a standard 5-field cron expression read in an IANA time zone, the next
//! time it fires, and the missed-run rule (a job whose times passed runs once, not once per slot).

use super::CronError;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use jiff::Timestamp;
use jiff::tz::TimeZone;

/// The most missed slots counted when a job catches up (the count is only reported).
const MISSED_COUNT_CAP: u32 = 1000;

/// A parsed schedule.
#[derive(Debug, Clone)]
pub struct Schedule {
    cron: Cron,
    tz: TimeZone,
    expr: String,
    tz_name: String,
}

/// What a scheduler does with a job at `now`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Not yet due.
    Wait,
    /// Due: run it once now. `missed` slots after the first due one also passed unrun (they
    /// are skipped, not run); `next` is the first time after `now`.
    Run { missed: u32, next: Option<Timestamp> },
}

impl Schedule {
    /// Parses `expr` (minute hour day-of-month month day-of-week) in the zone `tz`.
    pub fn parse(expr: &str, tz: &str) -> Result<Schedule, CronError> {
        let expr = expr.trim();
        let fields = expr.split_whitespace().count();
        if fields != 5 {
            return Err(CronError::Schedule(format!(
                "'{}' has {fields} fields; a schedule has exactly 5: minute hour day-of-month month \
                 day-of-week, e.g. \"0 9 * * 1-5\" for 09:00 on weekdays",
                shown(expr)
            )));
        }
        let parser = CronParser::builder().seconds(Seconds::Disallowed).year(Year::Disallowed).build();
        let cron = parser.parse(expr).map_err(|e| {
            CronError::Schedule(format!(
                "'{}' is not a valid cron expression ({e}); fields are minute (0-59) hour (0-23) \
                 day-of-month (1-31) month (1-12) day-of-week (0-6, 0 = Sunday), with *, lists (1,15), \
                 ranges (1-5) and steps (*/10)",
                shown(expr)
            ))
        })?;
        let tz_name = tz.trim();
        let zone = TimeZone::get(tz_name).map_err(|_| {
            CronError::Timezone(format!(
                "'{}' is not a known IANA time zone; use a name such as \"UTC\", \"Europe/Paris\" or \
                 \"America/New_York\"",
                shown(tz_name)
            ))
        })?;
        let s = Schedule { cron, tz: zone, expr: expr.to_string(), tz_name: tz_name.to_string() };
        // A pattern that names no real date (31 February) never fires: refuse it now.
        if s.next_after(Timestamp::UNIX_EPOCH).is_none() {
            return Err(CronError::Schedule(format!(
                "'{}' never fires (it names no real date); check the day-of-month and month",
                shown(expr)
            )));
        }
        Ok(s)
    }

    pub fn expr(&self) -> &str {
        &self.expr
    }

    pub fn timezone(&self) -> &str {
        &self.tz_name
    }

    /// The first firing strictly after `t`.
    pub fn next_after(&self, t: Timestamp) -> Option<Timestamp> {
        let zoned = t.to_zoned(self.tz.clone());
        self.cron.find_next_occurrence(&zoned, false).ok().map(|z| z.timestamp())
    }

    /// The missed-run rule: a job is due when its next time is at or before `now`; it then runs
    /// once, and its next time is the first firing after `now`, so slots that passed while no
    /// scheduler ran are skipped (and counted), never run one by one.
    pub fn plan(&self, next_run: Timestamp, now: Timestamp) -> Plan {
        if next_run > now {
            return Plan::Wait;
        }
        let mut missed = 0;
        let mut at = next_run;
        while missed < MISSED_COUNT_CAP {
            match self.next_after(at) {
                Some(t) if t <= now => {
                    missed += 1;
                    at = t;
                }
                _ => break,
            }
        }
        Plan::Run { missed, next: self.next_after(now) }
    }

    /// `t` in this schedule's zone, `YYYY-MM-DD HH:MM TZ`.
    pub fn local(&self, t: Timestamp) -> String {
        t.to_zoned(self.tz.clone()).strftime("%Y-%m-%d %H:%M %Z").to_string()
    }
}

fn shown(s: &str) -> String {
    s.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn five_fields_in_a_zone() {
        let s = Schedule::parse("0 9 * * 1-5", "Europe/Paris").unwrap();
        // Thursday 2026-01-01 08:00 UTC is 09:00 in Paris (UTC+1 in winter).
        assert_eq!(s.next_after(ts("2026-01-01T07:00:00Z")), Some(ts("2026-01-01T08:00:00Z")));
        // Friday 09:00 then Monday 09:00: the weekend is skipped.
        assert_eq!(s.next_after(ts("2026-01-02T08:00:00Z")), Some(ts("2026-01-05T08:00:00Z")));
        // Summer time: 09:00 in Paris is 07:00 UTC.
        assert_eq!(s.next_after(ts("2026-07-01T00:00:00Z")), Some(ts("2026-07-01T07:00:00Z")));
        assert_eq!(s.local(ts("2026-07-01T07:00:00Z")), "2026-07-01 09:00 CEST");
        let u = Schedule::parse("*/15 * * * *", "UTC").unwrap();
        assert_eq!(u.next_after(ts("2026-01-01T09:00:00Z")), Some(ts("2026-01-01T09:15:00Z")));
    }

    #[test]
    fn bad_schedules_and_zones_say_what_is_expected() {
        let e = Schedule::parse("0 9 * *", "UTC").unwrap_err().to_string();
        assert!(e.contains("has 4 fields") && e.contains("exactly 5"), "{e}");
        let e = Schedule::parse("0 0 9 * * *", "UTC").unwrap_err().to_string();
        assert!(e.contains("has 6 fields"), "{e}");
        let e = Schedule::parse("61 9 * * *", "UTC").unwrap_err().to_string();
        assert!(e.contains("not a valid cron expression") && e.contains("minute (0-59)"), "{e}");
        let e = Schedule::parse("0 9 * * *", "Mars/Olympus").unwrap_err().to_string();
        assert!(e.contains("'Mars/Olympus' is not a known IANA time zone"), "{e}");
        let e = Schedule::parse("0 9 31 2 *", "UTC").unwrap_err().to_string();
        assert!(e.contains("never fires"), "{e}");
    }

    #[test]
    fn missed_runs_run_once_and_are_counted() {
        let s = Schedule::parse("0 * * * *", "UTC").unwrap();
        // Not due yet.
        assert_eq!(s.plan(ts("2026-01-01T10:00:00Z"), ts("2026-01-01T09:59:00Z")), Plan::Wait);
        // Due exactly at its time: run, nothing missed.
        assert_eq!(
            s.plan(ts("2026-01-01T10:00:00Z"), ts("2026-01-01T10:00:00Z")),
            Plan::Run { missed: 0, next: Some(ts("2026-01-01T11:00:00Z")) }
        );
        // The scheduler was off from 10:00 to 13:30: one run now, 11:00, 12:00 and 13:00
        // skipped, and the next run at 14:00 (not 11:00).
        assert_eq!(
            s.plan(ts("2026-01-01T10:00:00Z"), ts("2026-01-01T13:30:00Z")),
            Plan::Run { missed: 3, next: Some(ts("2026-01-01T14:00:00Z")) }
        );
    }
}
