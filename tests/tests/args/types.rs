//! The argument types the tests share: one per shape the derive supports.

use std::collections::{BTreeMap, HashMap};

use toolnexus::Args;

/// An expense to file.
#[derive(Args, Debug, Clone, PartialEq)]
pub(crate) struct Expense {
    /// The amount, in cents.
    pub(crate) amount: u32,
    /// What it was for.
    pub(crate) note: Option<String>,
    /// How many of it.
    #[arg(default = 1)]
    pub(crate) count: u8,
    #[serde(rename = "cat")]
    pub(crate) category: Category,
    pub(crate) tags: Vec<String>,
    #[serde(skip)]
    pub(crate) internal: bool,
}

/// Where an expense goes.
#[derive(Args, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Category {
    Travel,
    OfficeSupplies,
    #[serde(rename = "other")]
    Misc,
}

/// How it was paid.
#[derive(Args, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Payment {
    /// By card.
    Card {
        /// The card's last four digits.
        last4: String,
    },
    Cash,
    BankTransfer {
        iban: String,
        reference: Option<String>,
    },
}

/// A change, adjacently tagged.
#[derive(Args, Debug, Clone, PartialEq)]
#[serde(tag = "op", content = "with")]
pub(crate) enum Change {
    Add(Expense),
    Move { from: i32, to: i32 },
    Clear,
}

/// A report: nesting, lists, maps and boxes of derived types.
#[derive(Args, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Report {
    pub(crate) expenses: Vec<Expense>,
    pub(crate) by_person: HashMap<String, Box<Expense>>,
    pub(crate) totals: BTreeMap<String, f64>,
    pub(crate) payment: Payment,
    pub(crate) last_change: Option<Change>,
    #[serde(default)]
    pub(crate) approved: bool,
}

/// Plain scalars, as the compile-time benchmark uses.
#[derive(Args, Debug, Clone, PartialEq)]
pub(crate) struct Lookup {
    /// What to look for.
    pub(crate) query: String,
    /// At most this many results.
    pub(crate) limit: u32,
    /// Whether to match exactly.
    pub(crate) exact: Option<bool>,
}

/// How urgent: a string enum whose variants say what they mean.
#[derive(Args, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Priority {
    /// Whenever there is time.
    Low,
    #[default]
    Normal,
    /// Before anything else.
    High,
}

/// Defaults of every kind, each shown in the schema.
#[derive(Args, Debug, Clone, PartialEq)]
pub(crate) struct Settings {
    /// Results per page.
    #[arg(default = 20)]
    pub(crate) limit: u32,
    #[arg(default = -1.5)]
    pub(crate) offset: f64,
    #[arg(default)]
    pub(crate) verbose: bool,
    #[serde(default = "report_name")]
    pub(crate) name: String,
    #[arg(default = Priority::High)]
    pub(crate) priority: Priority,
    #[arg(default)]
    pub(crate) fallback: Priority,
    #[arg(default = Payment::Card { last4: "0000".to_owned() })]
    pub(crate) payment: Payment,
    #[arg(default)]
    pub(crate) note: Option<String>,
    #[arg(default = vec![Change::Clear, Change::Move { from: 1, to: 2 }])]
    pub(crate) changes: Vec<Change>,
    #[arg(default = 0.1)]
    pub(crate) ratio: f32,
}

fn report_name() -> String {
    "report".to_owned()
}

/// Defaults of the whole struct.
#[derive(Args, Debug, Clone, PartialEq)]
#[serde(default)]
pub(crate) struct Paging {
    pub(crate) page: u32,
    pub(crate) size: u32,
}

impl Default for Paging {
    fn default() -> Self {
        Self { page: 1, size: 50 }
    }
}
