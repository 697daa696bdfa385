//! Runnable examples of toolnexus; see the `[[example]]` entries of this package's manifest.
//! Run one with `cargo run -p toolnexus-examples --example <name>`.
//!
//! This library holds what the terminal examples share: asking a human on a terminal the way
//! a careful command-line tool does.

pub mod terminal {
    //! Asking on a terminal: a blank line asks again, end of input (Ctrl-D) declines and says
    //! so, and a yes/no question takes `y`, `yes`, `n` or `no` in any case.

    use std::io::{BufRead, Write};

    /// What the human typed: an answer, or end of input (Ctrl-D), which declines.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum Typed<T> {
        /// An answer.
        Answer(T),
        /// End of input: the caller declines.
        EndOfInput,
    }

    /// Asks `prompt` until a non-blank line arrives; returns it trimmed.
    pub fn ask_line(
        prompt: &str,
        input: &mut impl BufRead,
        out: &mut impl Write,
    ) -> std::io::Result<Typed<String>> {
        loop {
            write!(out, "  ? {prompt} (Ctrl-D to decline) ")?;
            out.flush()?;
            let mut line = String::new();
            if input.read_line(&mut line)? == 0 {
                writeln!(out, "\n  (end of input: declining)")?;
                return Ok(Typed::EndOfInput);
            }
            let line = line.trim();
            if !line.is_empty() {
                return Ok(Typed::Answer(line.to_owned()));
            }
            writeln!(out, "  please type an answer, or press Ctrl-D to decline")?;
        }
    }

    /// Asks a yes/no question until `y`, `yes`, `n` or `no` (any case) arrives.
    pub fn confirm(
        prompt: &str,
        input: &mut impl BufRead,
        out: &mut impl Write,
    ) -> std::io::Result<Typed<bool>> {
        loop {
            write!(out, "  ? {prompt} [y/n] ")?;
            out.flush()?;
            let mut line = String::new();
            if input.read_line(&mut line)? == 0 {
                writeln!(out, "\n  (end of input: declining)")?;
                return Ok(Typed::EndOfInput);
            }
            match line.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => return Ok(Typed::Answer(true)),
                "n" | "no" => return Ok(Typed::Answer(false)),
                _ => writeln!(
                    out,
                    "  please answer y(es) or n(o), or press Ctrl-D to decline"
                )?,
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::{Typed, ask_line, confirm};

        fn line(input: &str) -> (Typed<String>, String) {
            let mut out = Vec::new();
            let typed = ask_line("Which city?", &mut input.as_bytes(), &mut out).unwrap();
            (typed, String::from_utf8(out).unwrap())
        }

        fn yes_no(input: &str) -> (Typed<bool>, String) {
            let mut out = Vec::new();
            let typed = confirm("Book it?", &mut input.as_bytes(), &mut out).unwrap();
            (typed, String::from_utf8(out).unwrap())
        }

        #[test]
        fn blank_lines_and_spaces_ask_again() {
            let (typed, out) = line("\n   \n Oslo \n");
            assert_eq!(typed, Typed::Answer("Oslo".to_owned()));
            assert_eq!(
                out,
                "  ? Which city? (Ctrl-D to decline)   please type an answer, or press Ctrl-D to decline\n"
                    .repeat(2)
                    + "  ? Which city? (Ctrl-D to decline) "
            );
        }

        #[test]
        fn end_of_input_declines_and_says_so() {
            let (typed, out) = line("  \n");
            assert_eq!(typed, Typed::EndOfInput);
            assert!(out.ends_with("\n  (end of input: declining)\n"), "{out}");
            assert_eq!(yes_no("").0, Typed::EndOfInput);
        }

        #[test]
        fn yes_and_no_in_any_spelling() {
            for word in ["y", "Y", "yes", "YES", " Yes "] {
                assert_eq!(
                    yes_no(&format!("{word}\n")).0,
                    Typed::Answer(true),
                    "{word}"
                );
            }
            for word in ["n", "no", "NO"] {
                assert_eq!(
                    yes_no(&format!("{word}\n")).0,
                    Typed::Answer(false),
                    "{word}"
                );
            }
            let (typed, out) = yes_no("maybe\n\nyes\n");
            assert_eq!(typed, Typed::Answer(true));
            assert_eq!(
                out.matches("please answer y(es) or n(o), or press Ctrl-D to decline")
                    .count(),
                2
            );
        }
    }
}
