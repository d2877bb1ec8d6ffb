//! Worst-case stack depth over a call graph: the largest sum of frames on any call path, refusing recursion.

use anyhow::{bail, Result};

/// A function of the program, as the depth computation sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// Its symbol name (mangled).
    pub name: String,
    /// Bytes its own frame takes, or why the function cannot be analysed.
    pub frame: Result<u64, String>,
    /// Every call and tail call in its body.
    pub calls: Vec<Call>,
}

/// One call site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// Address of the call instruction.
    pub site: u64,
    /// Who is called.
    pub callee: Callee,
    /// A tail call made after the caller's frame was popped: the callee starts at the caller's own depth.
    pub after_frame_popped: bool,
}

/// The target of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Callee {
    /// A function of the program, by index.
    Own(usize),
    /// Code outside the program (a PLT entry, or a call through a pointer): zero bytes of our own stack.
    Foreign(String),
}

/// One function on the deepest path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Its symbol name.
    pub function: String,
    /// Its own frame in bytes.
    pub frame: u64,
    /// Reached by a tail call after its caller's frame was popped (its caller's frame is then not counted).
    pub tail: bool,
}

/// The worst case of one entry point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worst {
    /// Largest sum of frames on any call path from the entry point.
    pub bytes: u64,
    /// That path, from the entry point down.
    pub path: Vec<Step>,
    /// Deepest stack at which foreign code is entered; that code's own use comes on top.
    pub foreign_entered_at: Option<u64>,
    /// Each foreign callee reachable from the entry point, with the functions that call it.
    pub foreign: Vec<(String, Vec<String>)>,
}

#[derive(Clone, Copy)]
enum State {
    New,
    Active,
    Done { bytes: u64, next: Option<usize>, foreign_entered_at: Option<u64> },
}

/// Computes worst cases over `functions`, reusing what earlier entry points already found.
pub struct Analyser<'a> {
    functions: &'a [Function],
    states: Vec<State>,
    active: Vec<usize>,
}

impl<'a> Analyser<'a> {
    /// An analyser of `functions`, whose `Callee::Own` indices point into the same slice.
    pub fn new(functions: &'a [Function]) -> Self {
        Self { functions, states: vec![State::New; functions.len()], active: Vec::new() }
    }

    /// The worst case from `entry`, or an error naming a recursion or a function with no known frame.
    pub fn worst(&mut self, entry: usize) -> Result<Worst> {
        self.visit(entry)?;
        let mut path = Vec::new();
        let mut current = Some((entry, false));
        while let Some((index, tail)) = current {
            let State::Done { next, .. } = self.states[index] else { unreachable!("visited above") };
            let function = &self.functions[index];
            path.push(Step { function: function.name.clone(), frame: *function.frame.as_ref().unwrap_or(&0), tail });
            current = next.map(|call| match function.calls[call] {
                Call { callee: Callee::Own(callee), after_frame_popped, .. } => (callee, after_frame_popped),
                Call { callee: Callee::Foreign(_), .. } => unreachable!("foreign calls are never on the path"),
            });
        }
        let State::Done { bytes, foreign_entered_at, .. } = self.states[entry] else { unreachable!("visited above") };
        Ok(Worst { bytes, path, foreign_entered_at, foreign: self.foreign_reachable_from(entry) })
    }

    fn visit(&mut self, index: usize) -> Result<()> {
        match self.states[index] {
            State::Done { .. } => return Ok(()),
            State::Active => {
                let start = self.active.iter().position(|&i| i == index).unwrap_or(0);
                let cycle: Vec<&str> =
                    self.active[start..].iter().chain([&index]).map(|&i| self.functions[i].name.as_str()).collect();
                bail!("recursion: {}", cycle.join(" -> "));
            }
            State::New => {}
        }
        let functions = self.functions;
        let function = &functions[index];
        let frame = match &function.frame {
            Ok(frame) => *frame,
            Err(reason) => match self.active.last() {
                Some(&caller) => {
                    bail!("{} (called from {}) cannot be analysed: {reason}", function.name, functions[caller].name)
                }
                None => bail!("{} cannot be analysed: {reason}", function.name),
            },
        };
        self.states[index] = State::Active;
        self.active.push(index);
        let mut bytes = frame;
        let mut next = None;
        let mut foreign_entered_at = None;
        for (position, call) in function.calls.iter().enumerate() {
            let base = if call.after_frame_popped { 0 } else { frame };
            match call.callee {
                Callee::Own(callee) => {
                    self.visit(callee)?;
                    let State::Done { bytes: callee_bytes, foreign_entered_at: callee_foreign, .. } =
                        self.states[callee]
                    else {
                        unreachable!("visited above")
                    };
                    if base + callee_bytes > bytes {
                        bytes = base + callee_bytes;
                        next = Some(position);
                    }
                    foreign_entered_at = foreign_entered_at.max(callee_foreign.map(|depth| base + depth));
                }
                Callee::Foreign(_) => foreign_entered_at = foreign_entered_at.max(Some(base)),
            }
        }
        self.active.pop();
        self.states[index] = State::Done { bytes, next, foreign_entered_at };
        Ok(())
    }

    fn foreign_reachable_from(&self, entry: usize) -> Vec<(String, Vec<String>)> {
        let mut seen = vec![false; self.functions.len()];
        let mut pending = vec![entry];
        let mut foreign: Vec<(String, Vec<String>)> = Vec::new();
        while let Some(index) = pending.pop() {
            if std::mem::replace(&mut seen[index], true) {
                continue;
            }
            let function = &self.functions[index];
            for call in &function.calls {
                match &call.callee {
                    Callee::Own(callee) => pending.push(*callee),
                    Callee::Foreign(name) => match foreign.iter_mut().find(|(known, _)| known == name) {
                        Some((_, callers)) if callers.contains(&function.name) => {}
                        Some((_, callers)) => callers.push(function.name.clone()),
                        None => foreign.push((name.clone(), vec![function.name.clone()])),
                    },
                }
            }
        }
        foreign.sort();
        foreign
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(name: &str, frame: u64, calls: &[(Callee, bool)]) -> Function {
        let calls = calls
            .iter()
            .enumerate()
            .map(|(site, (callee, after_frame_popped))| Call {
                site: site as u64,
                callee: callee.clone(),
                after_frame_popped: *after_frame_popped,
            })
            .collect();
        Function { name: name.into(), frame: Ok(frame), calls }
    }

    #[test]
    fn takes_the_deepest_path_and_counts_foreign_code_as_zero() {
        let functions = [
            function("entry", 16, &[(Callee::Own(1), false), (Callee::Own(2), false)]),
            function("shallow", 100, &[(Callee::Foreign("malloc@plt".into()), false)]),
            function("deep", 40, &[(Callee::Own(3), false), (Callee::Foreign("callr r4".into()), false)]),
            function("leaf", 90, &[]),
        ];
        let worst = Analyser::new(&functions).worst(0).unwrap();
        assert_eq!(worst.bytes, 16 + 40 + 90);
        let names: Vec<_> = worst.path.iter().map(|s| s.function.as_str()).collect();
        assert_eq!(names, ["entry", "deep", "leaf"]);
        assert_eq!(worst.foreign_entered_at, Some(116));
        assert_eq!(
            worst.foreign,
            [
                ("callr r4".to_string(), vec!["deep".to_string()]),
                ("malloc@plt".to_string(), vec!["shallow".to_string()])
            ]
        );
    }

    #[test]
    fn a_tail_call_after_the_frame_is_popped_starts_at_the_callers_depth() {
        let functions = [
            function("entry", 32, &[(Callee::Own(1), true)]),
            function("target", 8, &[]),
            function("keeps_frame", 32, &[(Callee::Own(1), false)]),
        ];
        let mut analyser = Analyser::new(&functions);
        let worst = analyser.worst(0).unwrap();
        assert_eq!(worst.bytes, 32);
        assert_eq!(worst.path.len(), 1, "the entry's own frame is deeper than the tail-called one");
        assert_eq!(analyser.worst(2).unwrap().bytes, 40);
    }

    #[test]
    fn refuses_recursion_naming_the_cycle() {
        let functions = [
            function("entry", 8, &[(Callee::Own(1), false)]),
            function("a", 8, &[(Callee::Own(2), false)]),
            function("b", 8, &[(Callee::Own(1), false)]),
        ];
        let error = Analyser::new(&functions).worst(0).unwrap_err();
        assert_eq!(error.to_string(), "recursion: a -> b -> a");
    }

    #[test]
    fn refuses_a_called_function_without_a_frame_size() {
        let mut functions = vec![function("entry", 8, &[(Callee::Own(1), false)]), function("mystery", 0, &[])];
        functions[1].frame = Err("no .stack_sizes record".into());
        let error = Analyser::new(&functions).worst(0).unwrap_err();
        assert_eq!(error.to_string(), "mystery (called from entry) cannot be analysed: no .stack_sizes record");
    }
}
