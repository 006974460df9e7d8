//! The expressions of one scope, without those of the subqueries inside it:
//! the walk every scope-aware pass (the resolver, `lucy check`, the
//! fan-out checks) makes over a clause.

use std::ops::ControlFlow;

use sqlparser::ast::{Expr, Query, Visit, Visitor};

/// What a walk over one scope sees.
pub trait TopLevel {
    /// A subquery at the top level; its own expressions are not walked.
    fn query(&mut self, _q: &Query) {}
    /// An expression at the top level (every node, outermost first).
    fn expr(&mut self, e: &Expr);
}

/// Walk `node`'s top-level subqueries and expressions.
pub fn walk_top_level<N: Visit + ?Sized, T: TopLevel>(node: &N, t: &mut T) {
    let mut v = Walk { t, depth: 0 };
    let _ = node.visit(&mut v);
}

/// Call `f` on every expression of `node` outside its subqueries.
pub fn top_level_exprs<N: Visit + ?Sized>(node: &N, f: impl FnMut(&Expr)) {
    struct Exprs<F>(F);
    impl<F: FnMut(&Expr)> TopLevel for Exprs<F> {
        fn expr(&mut self, e: &Expr) {
            (self.0)(e)
        }
    }
    walk_top_level(node, &mut Exprs(f));
}

struct Walk<'t, T> {
    t: &'t mut T,
    depth: usize,
}

impl<T: TopLevel> Visitor for Walk<'_, T> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        if self.depth == 0 {
            self.t.query(q);
        }
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if self.depth == 0 {
            self.t.expr(e);
        }
        ControlFlow::Continue(())
    }
}
