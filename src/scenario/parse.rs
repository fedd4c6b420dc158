//! Tokenizing and value parsing for scenario files.

use crate::util::map::BTreeMap;

use crate::types::TaskSet;

/// A parse or expectation failure, with the 1-based line it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ScenarioError {
    /// The line of the scenario file (1-based).
    pub line: usize,
    /// What went wrong.
    pub message: String,
}

impl ScenarioError {
    /// An error at `line`.
    pub fn new(line: usize, message: impl Into<String>) -> Self {
        ScenarioError {
            line,
            message: message.into(),
        }
    }
}

/// Split a line into words; `"..."` quotes a word with spaces (`\"` inside).
pub fn tokenize(line: &str, n: usize) -> Result<Vec<String>, ScenarioError> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_quotes = false;
    let mut has = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if in_quotes => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '"' => {
                in_quotes = !in_quotes;
                has = true;
            }
            c if c.is_whitespace() && !in_quotes => {
                if has {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            c => {
                cur.push(c);
                has = true;
            }
        }
    }
    if in_quotes {
        return Err(ScenarioError::new(n, "unterminated quote"));
    }
    if has {
        out.push(cur);
    }
    Ok(out)
}

/// The words after the command: bare flags and `key=value` pairs.
#[derive(Debug, Clone, Default)]
pub struct Args {
    pub line: usize,
    pub positional: Vec<String>,
    pub pairs: BTreeMap<String, String>,
    used: std::cell::RefCell<Vec<String>>,
}

impl Args {
    pub fn parse(words: &[String], line: usize) -> Result<Args, ScenarioError> {
        let mut a = Args {
            line,
            ..Default::default()
        };
        for w in words {
            match w.split_once('=') {
                Some((k, v)) => {
                    if a.pairs.insert(k.to_string(), v.to_string()).is_some() {
                        return Err(ScenarioError::new(line, format!("`{k}` given twice")));
                    }
                }
                None => a.positional.push(w.clone()),
            }
        }
        Ok(a)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.used.borrow_mut().push(key.to_string());
        self.pairs.get(key).map(String::as_str)
    }

    pub fn flag(&self, key: &str) -> bool {
        self.positional.iter().any(|p| p == key)
    }

    pub fn req(&self, key: &str) -> Result<&str, ScenarioError> {
        self.get(key)
            .ok_or_else(|| ScenarioError::new(self.line, format!("missing `{key}=`")))
    }

    pub fn int<T: std::str::FromStr>(&self, key: &str) -> Result<Option<T>, ScenarioError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| {
                ScenarioError::new(self.line, format!("`{key}={v}` is not a valid number"))
            }),
        }
    }

    /// Fail on keys nobody asked for (typos in scenario files must not pass silently).
    pub fn finish(&self, allowed_flags: &[&str]) -> Result<(), ScenarioError> {
        let used = self.used.borrow();
        for k in self.pairs.keys() {
            if !used.iter().any(|u| u == k) {
                return Err(ScenarioError::new(
                    self.line,
                    format!("unknown field `{k}`"),
                ));
            }
        }
        for p in &self.positional {
            if !allowed_flags.contains(&p.as_str()) {
                return Err(ScenarioError::new(
                    self.line,
                    format!("unexpected word `{p}`"),
                ));
            }
        }
        Ok(())
    }
}

/// Task list syntax: `-` = null, `[]` = empty, `s1:0,1,2;s2:0` = tasks.
pub fn parse_tasks(v: &str, line: usize) -> Result<Option<TaskSet>, ScenarioError> {
    match v {
        "-" | "null" => return Ok(None),
        "[]" => return Ok(Some(TaskSet::new())),
        _ => {}
    }
    let mut out = TaskSet::new();
    for group in v.split(';').filter(|g| !g.is_empty()) {
        let (sub, parts) = group.rsplit_once(':').ok_or_else(|| {
            ScenarioError::new(line, format!("task list `{v}`: expected sub:p,p"))
        })?;
        for p in parts.split(',').filter(|p| !p.is_empty()) {
            let p: i32 = p.parse().map_err(|_| {
                ScenarioError::new(line, format!("task list `{v}`: bad partition `{p}`"))
            })?;
            out.insert(sub, p);
        }
    }
    Ok(Some(out))
}

/// The inverse of [`parse_tasks`] for a present list.
pub fn format_tasks(t: &TaskSet) -> String {
    if t.is_empty() {
        return "[]".to_string();
    }
    t.subtopologies()
        .map(|(s, ps)| {
            format!(
                "{s}:{}",
                ps.iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            )
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// `a,b,c` (empty string = empty list).
pub fn list(v: &str) -> Vec<String> {
    v.split(',')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}
