// SPDX-License-Identifier: MIT OR Apache-2.0
//
// lardcc_omp: a gcc plugin that marks the OpenMP loops gcc expands inline,
// so that the lard-cc runtime sees them (guest-sdk/cc/omp/worksharing.c,
// "static loops", and cc/omp/simd.c; docs/lard-cc.md).
//
// gcc computes each thread's share of a `for` loop with schedule(static),
// schedule(static, c), schedule(auto) or no schedule clause (and without
// `ordered`) from omp_get_thread_num() and omp_get_num_threads() in the
// outlined body, and runs a `simd` loop as straight-line code: libgomp is
// not called per chunk or per lane.  Right after omplower, before ompexp
// expands the loop, this pass adds three calls around every such
// GIMPLE_OMP_FOR (the lowered loop body follows the statement in its
// sequence, up to the matching GIMPLE_OMP_CONTINUE):
//
//   __lardcc_omp_static_begin(chunk, split,  before the loop (once per thread,
//       iterations, nowait)                  before gcc's bounds computation)
//   __lardcc_omp_simd_begin(safelen, split)
//   __lardcc_omp_*_iter(index)               first statement of every iteration
//   __lardcc_omp_*_end()                     after the loop (before a
//                                            reduction's combination, the
//                                            lastprivate copy-out and the
//                                            barrier)
//
// `chunk` is the schedule's chunk size and `safelen` the simd loop's (0:
// none); `iterations` the loop's logical iteration count (of the collapsed
// nest; -1 when the plugin cannot say: a non-rectangular nest, an
// increment it does not know) and `nowait` whether the loop has that
// clause (a combined `parallel for` has it: its region ends in a barrier); `split` is -1 when the plugin was given
// -fplugin-arg-lardcc_omp-iterations (lard-cc --lard-omp-iterations=all):
// the runtime then runs every chunk (every iteration when there is no chunk
// size) and every simd lane as a language thread of its own; W with
// -fplugin-arg-lardcc_omp-iterations=W (lard-cc's default, window:W): the
// same in a window of W language threads (guest-sdk/cc/omp/window.c); 0
// without the argument (--lard-omp-iterations=off).  simd loops are marked
// only with the argument, and not when an `ordered simd` region orders
// their lanes.  A loop whose chunk size or safelen is not a value the call can
// take is not split.  `index` is the loop's first iteration variable, as a
// long.

#include "gcc-plugin.h"
#include "plugin-version.h"

#include "context.h"
#include "function.h"
#include "tree.h"
#include "tree-pass.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "gimple-walk.h"
#include "stringpool.h"
#include "omp-general.h"
#include "diagnostic-core.h"
#include "attribs.h"
#include "gimplify.h"
#include "gimplify-me.h"

#include <algorithm>
#include <vector>

int plugin_is_GPL_compatible;

namespace {

// What the begin marks' `split` says: 0 none, -1 every unit its own, W a
// window of W.
long split_value;
bool split_loops;

// The runtime's marks for one kind of loop.
struct marks {
    const char *begin, *iter, *end;
    tree begin_fn, iter_fn, end_fn;
};
marks static_marks = {"__lardcc_omp_static_begin", "__lardcc_omp_static_iter",
                      "__lardcc_omp_static_end", NULL_TREE, NULL_TREE, NULL_TREE};
marks simd_marks = {"__lardcc_omp_simd_begin", "__lardcc_omp_simd_iter",
                    "__lardcc_omp_simd_end", NULL_TREE, NULL_TREE, NULL_TREE};

tree runtime_fn(const char *name, tree a, tree b)
{
    tree type = build_function_type_list(void_type_node, a, b, NULL_TREE);
    tree fn = build_fn_decl(name, type);
    DECL_EXTERNAL(fn) = 1;
    TREE_PUBLIC(fn) = 1;
    return fn;
}

void declare(marks *m)
{
    if (m->begin_fn != NULL_TREE)
        return;
    if (m == &static_marks) {
        tree type = build_function_type_list(void_type_node, long_integer_type_node,
                                             long_integer_type_node, long_integer_type_node,
                                             long_integer_type_node, NULL_TREE);
        m->begin_fn = build_fn_decl(m->begin, type);
        DECL_EXTERNAL(m->begin_fn) = 1;
        TREE_PUBLIC(m->begin_fn) = 1;
    } else {
        m->begin_fn = runtime_fn(m->begin, long_integer_type_node, long_integer_type_node);
    }
    m->iter_fn = runtime_fn(m->iter, long_integer_type_node, NULL_TREE);
    m->end_fn = runtime_fn(m->end, NULL_TREE, NULL_TREE);
}

// What to mark a loop with: `m` NULL for none; `arg` the begin mark's first
// argument (a static schedule's chunk size, a simd loop's safelen;
// NULL_TREE: none); `may_split` whether its iterations may become logical
// threads.
struct plan {
    marks *m;
    tree arg;
    bool may_split;
};

// Worksharing loops gcc expands inline with a static schedule (also the
// one a `for simd` splits among the threads: its iterations are the
// inner simd loop's, so it is never split itself), and, with
// -fplugin-arg-lardcc_omp-iterations, simd loops.
plan classify(gomp_for *stmt)
{
    plan p = {NULL, NULL_TREE, false};
    tree clauses = gimple_omp_for_clauses(stmt);
    if (gimple_omp_for_kind(stmt) == GF_OMP_FOR_KIND_SIMD) {
        if (split_loops) {
            tree safelen = omp_find_clause(clauses, OMP_CLAUSE_SAFELEN);
            p.m = &simd_marks;
            p.arg = safelen != NULL_TREE ? OMP_CLAUSE_SAFELEN_EXPR(safelen) : NULL_TREE;
            p.may_split = safelen == NULL_TREE || TREE_CODE(p.arg) == INTEGER_CST;
        }
        return p;
    }
    if (gimple_omp_for_kind(stmt) != GF_OMP_FOR_KIND_FOR ||
        omp_find_clause(clauses, OMP_CLAUSE_ORDERED) != NULL_TREE)
        return p;
    tree sched = omp_find_clause(clauses, OMP_CLAUSE_SCHEDULE);
    if (sched != NULL_TREE) {
        switch (OMP_CLAUSE_SCHEDULE_KIND(sched) & OMP_CLAUSE_SCHEDULE_MASK) {
        case OMP_CLAUSE_SCHEDULE_STATIC:
            p.arg = OMP_CLAUSE_SCHEDULE_CHUNK_EXPR(sched);
            break;
        case OMP_CLAUSE_SCHEDULE_AUTO:
            break;
        default:
            return p;
        }
    }
    p.m = &static_marks;
    p.may_split = split_loops && !gimple_omp_for_combined_p(stmt);
    return p;
}

// `expr` as a long, by a statement inserted before `gsi` when it needs a
// conversion; NULL_TREE when it cannot be a call argument.
tree as_long(tree expr, gimple_stmt_iterator *gsi, location_t loc)
{
    if (expr == NULL_TREE || !is_gimple_val(expr))
        return NULL_TREE;
    tree type = TREE_TYPE(expr);
    if (!INTEGRAL_TYPE_P(type) && !POINTER_TYPE_P(type))
        return NULL_TREE;
    if (TREE_CODE(expr) == INTEGER_CST)
        return fold_convert(long_integer_type_node, expr);
    if (types_compatible_p(type, long_integer_type_node))
        return expr;
    tree tmp = create_tmp_var(long_integer_type_node, "lardcc_omp");
    gassign *conv = gimple_build_assign(tmp, NOP_EXPR, expr);
    gimple_set_location(conv, loc);
    gsi_insert_before(gsi, conv, GSI_SAME_STMT);
    return tmp;
}

// The storage of `var` that lanes share when gcc did not vectorize the
// loop: the variable, or the "omp simd array" its value expression indexes
// by lane number (then always 0); NULL_TREE for none.
tree lane_storage(tree var)
{
    if (!VAR_P(var) || TREE_STATIC(var) || DECL_EXTERNAL(var))
        return NULL_TREE;
    if (DECL_HAS_VALUE_EXPR_P(var)) {
        tree base = get_base_address(DECL_VALUE_EXPR(var));
        if (base == NULL_TREE || !VAR_P(base) ||
            !lookup_attribute("omp simd array", DECL_ATTRIBUTES(base)))
            return NULL_TREE;
        var = base;
    } else if (!TREE_ADDRESSABLE(var) && !AGGREGATE_TYPE_P(TREE_TYPE(var))) {
        return NULL_TREE; // a register: never a Tracked access
    }
    tree size = TYPE_SIZE_UNIT(TREE_TYPE(var));
    if (size == NULL_TREE || TREE_CODE(size) != INTEGER_CST || integer_zerop(size))
        return NULL_TREE;
    return var;
}

tree collect_bind_vars(gimple_stmt_iterator *gsi, bool *handled, struct walk_stmt_info *wi)
{
    if (gbind *b = dyn_cast<gbind *>(gsi_stmt(*gsi)))
        for (tree v = gimple_bind_vars(b); v != NULL_TREE; v = DECL_CHAIN(v))
            static_cast<std::vector<tree> *>(wi->info)->push_back(v);
    *handled = false;
    return NULL_TREE;
}


tree private_fn;

void declare_private_fn()
{
    if (private_fn == NULL_TREE)
        private_fn = runtime_fn("__lardcc_omp_lane_private", ptr_type_node,
                                long_integer_type_node);
}

// Every lane of a simd loop starts with its private copies (the
// construct's bind's variables, and those of the scopes in its body)
// without history: __lardcc_omp_lane_private(&storage, size) after the
// iteration mark.  Such storage is taken to memory, which costs only the
// builds that split lanes.
void clear_privates(gbind *bind, gimple_stmt_iterator at, gimple_stmt_iterator cont,
                    gimple_stmt_iterator body, location_t loc)
{
    std::vector<tree> vars;
    for (tree v = gimple_bind_vars(bind); v != NULL_TREE; v = DECL_CHAIN(v))
        vars.push_back(v);
    gimple_stmt_iterator i = at;
    for (gsi_next(&i); gsi_stmt(i) != gsi_stmt(cont); gsi_next(&i)) {
        struct walk_stmt_info wi;
        memset(&wi, 0, sizeof wi);
        wi.info = &vars;
        gimple_stmt_iterator sub = i;
        walk_gimple_stmt(&sub, collect_bind_vars, NULL, &wi);
    }
    std::vector<tree> done;
    for (tree v : vars) {
        tree storage = lane_storage(v);
        if (storage == NULL_TREE || std::find(done.begin(), done.end(), storage) != done.end())
            continue;
        done.push_back(storage);
        declare_private_fn();
        TREE_ADDRESSABLE(storage) = 1;
        tree size = fold_convert(long_integer_type_node, TYPE_SIZE_UNIT(TREE_TYPE(storage)));
        gcall *clear = gimple_build_call(private_fn, 2, build_fold_addr_expr(storage), size);
        gimple_set_location(clear, loc);
        gsi_insert_before(&body, clear, GSI_SAME_STMT);
    }
}

// The logical iteration count of `stmt`'s (collapsed) loop nest as a long
// value computed before `at`, or -1 when a bound or the increment is not
// one the plugin knows (a non-rectangular nest's bounds are vectors).  Per
// loop, with step s: `<` gives (n2 - n1 + s - 1) / s, `<=` (n2 - n1 + s) / s,
// `>` and `>=` the same with -s and the bounds swapped, `!=` (n2 - n1) / s;
// at least 0.
tree iteration_count(gomp_for *stmt, gimple_stmt_iterator *at)
{
    tree lng = long_integer_type_node;
    tree unknown = build_int_cst(lng, -1);
    tree count = NULL_TREE;
    for (size_t i = 0; i < gimple_omp_for_collapse(stmt); i++) {
        tree n1 = gimple_omp_for_initial(stmt, i), n2 = gimple_omp_for_final(stmt, i);
        tree incr = gimple_omp_for_incr(stmt, i);
        if (TREE_CODE(n1) == TREE_VEC || TREE_CODE(n2) == TREE_VEC || incr == NULL_TREE)
            return unknown;
        enum tree_code ic = TREE_CODE(incr);
        if (ic != PLUS_EXPR && ic != MINUS_EXPR && ic != POINTER_PLUS_EXPR)
            return unknown;
        tree lo = fold_convert(lng, n1), hi = fold_convert(lng, n2);
        tree step = fold_convert(lng, TREE_OPERAND(incr, 1));
        if (ic == MINUS_EXPR)
            step = fold_build1(NEGATE_EXPR, lng, step);
        tree one = build_int_cst(lng, 1), n;
        switch (gimple_omp_for_cond(stmt, i)) {
        case LT_EXPR:
        case LE_EXPR:
            n = fold_build2(PLUS_EXPR, lng, fold_build2(MINUS_EXPR, lng, hi, lo), step);
            if (gimple_omp_for_cond(stmt, i) == LT_EXPR)
                n = fold_build2(MINUS_EXPR, lng, n, one);
            n = fold_build2(TRUNC_DIV_EXPR, lng, n, step);
            break;
        case GT_EXPR:
        case GE_EXPR:
            step = fold_build1(NEGATE_EXPR, lng, step);
            n = fold_build2(PLUS_EXPR, lng, fold_build2(MINUS_EXPR, lng, lo, hi), step);
            if (gimple_omp_for_cond(stmt, i) == GT_EXPR)
                n = fold_build2(MINUS_EXPR, lng, n, one);
            n = fold_build2(TRUNC_DIV_EXPR, lng, n, step);
            break;
        case NE_EXPR:
            n = fold_build2(TRUNC_DIV_EXPR, lng, fold_build2(MINUS_EXPR, lng, hi, lo), step);
            break;
        default:
            return unknown;
        }
        n = fold_build2(MAX_EXPR, lng, n, build_int_cst(lng, 0));
        count = count == NULL_TREE ? n : fold_build2(MULT_EXPR, lng, count, n);
    }
    if (count == NULL_TREE)
        return unknown;
    return force_gimple_operand_gsi(at, count, true, NULL_TREE, true, GSI_SAME_STMT);
}

tree find_ordered(gimple_stmt_iterator *gsi, bool *handled, struct walk_stmt_info *wi)
{
    if (gimple_code(gsi_stmt(*gsi)) == GIMPLE_OMP_ORDERED)
        *static_cast<bool *>(wi->info) = true;
    *handled = false;
    return NULL_TREE;
}

void mark(gimple_stmt_iterator at, gbind *bind)
{
    gomp_for *stmt = as_a<gomp_for *>(gsi_stmt(at));
    plan p = classify(stmt);
    if (p.m == NULL)
        return;
    location_t loc = gimple_location(stmt);

    // The matching GIMPLE_OMP_CONTINUE: the first at this level whose
    // nesting count returns to zero.  An `ordered simd` region in the body
    // orders the lanes in a way the runtime does not see: such a loop is
    // not split.
    gimple_stmt_iterator cont = at;
    int depth = 0;
    bool ordered = false;
    for (; !gsi_end_p(cont); gsi_next(&cont)) {
        gimple *s = gsi_stmt(cont);
        if (gimple_code(s) == GIMPLE_OMP_FOR) {
            depth++;
        } else if (gimple_code(s) == GIMPLE_OMP_CONTINUE && --depth == 0) {
            break;
        } else {
            struct walk_stmt_info wi;
            memset(&wi, 0, sizeof wi);
            wi.info = &ordered;
            gimple_stmt_iterator sub = cont;
            walk_gimple_stmt(&sub, find_ordered, NULL, &wi);
        }
    }
    if (gsi_end_p(cont))
        return;
    if (ordered && p.m == &simd_marks)
        return;

    declare(p.m);
    bool split = p.may_split;
    tree arg = p.arg == NULL_TREE ? build_int_cst(long_integer_type_node, 0)
                                  : as_long(p.arg, &at, loc);
    if (arg == NULL_TREE) {
        arg = build_int_cst(long_integer_type_node, 0);
        split = false;
    }
    if (!split && p.m == &simd_marks)
        return;
    tree split_arg = build_int_cst(long_integer_type_node, split ? split_value : 0);
    gcall *begin;
    if (p.m == &static_marks) {
        tree nowait = build_int_cst(long_integer_type_node,
                                    omp_find_clause(gimple_omp_for_clauses(stmt),
                                                    OMP_CLAUSE_NOWAIT) != NULL_TREE);
        begin = gimple_build_call(p.m->begin_fn, 4, arg, split_arg,
                                  iteration_count(stmt, &at), nowait);
    } else {
        begin = gimple_build_call(p.m->begin_fn, 2, arg, split_arg);
    }
    gimple_set_location(begin, loc);
    gsi_insert_before(&at, begin, GSI_SAME_STMT);

    gcall *end = gimple_build_call(p.m->end_fn, 0);
    gimple_set_location(end, loc);
    gsi_insert_after(&cont, end, GSI_NEW_STMT);

    // The iteration mark goes first in the body, right after the loop
    // statement; its argument is read there (gcc sets the iteration
    // variables before the body's first statement).
    gimple_stmt_iterator body = at;
    gsi_next(&body);
    tree iarg = as_long(gimple_omp_for_index(stmt, 0), &body, loc);
    if (iarg == NULL_TREE)
        iarg = build_int_cst(long_integer_type_node, 0);
    gcall *iter = gimple_build_call(p.m->iter_fn, 1, iarg);
    gimple_set_location(iter, loc);
    gsi_insert_before(&body, iter, GSI_SAME_STMT);
    if (p.m == &simd_marks)
        clear_privates(bind, at, cont, body, loc);
}

// A loop and the bind the lowering put it in (its construct's: the
// privatized copies are that bind's variables).
struct found {
    gimple_stmt_iterator at;
    gbind *bind;
};

tree find_loops(gimple_stmt_iterator *gsi, bool *handled, struct walk_stmt_info *wi)
{
    if (gbind *b = dyn_cast<gbind *>(gsi_stmt(*gsi))) {
        for (gimple_stmt_iterator i = gsi_start(*gimple_bind_body_ptr(b)); !gsi_end_p(i);
             gsi_next(&i))
            if (gimple_code(gsi_stmt(i)) == GIMPLE_OMP_FOR)
                static_cast<std::vector<found> *>(wi->info)->push_back({i, b});
    }
    *handled = false;
    return NULL_TREE;
}

const pass_data marks_data = {
    GIMPLE_PASS, "lardcc_omp", OPTGROUP_NONE, TV_NONE, PROP_gimple_any, 0, 0, 0, 0,
};

class marks_pass : public gimple_opt_pass {
  public:
    explicit marks_pass(gcc::context *ctx) : gimple_opt_pass(marks_data, ctx) {}
    bool gate(function *) override { return flag_openmp != 0; }
    unsigned int execute(function *fun) override
    {
        gimple_seq body = gimple_body(fun->decl);
        std::vector<found> loops;
        struct walk_stmt_info wi;
        memset(&wi, 0, sizeof wi);
        wi.info = &loops;
        walk_gimple_seq_mod(&body, find_loops, NULL, &wi);
        for (found &f : loops)
            mark(f.at, f.bind);
        gimple_set_body(fun->decl, body);
        return 0;
    }
};

} // namespace

int plugin_init(struct plugin_name_args *info, struct plugin_gcc_version *version)
{
    if (!plugin_default_version_check(version, &gcc_version)) {
        error("%<lardcc_omp%>: built for gcc %s, loaded by gcc %s", gcc_version.basever,
              version->basever);
        return 1;
    }
    for (int i = 0; i < info->argc; i++) {
        if (strcmp(info->argv[i].key, "iterations") == 0) {
            const char *v = info->argv[i].value;
            char *end = NULL;
            split_loops = true;
            split_value = v == NULL ? -1 : strtol(v, &end, 10);
            if (v != NULL && (*end != '\0' || split_value <= 0)) {
                error("%<lardcc_omp%>: %<iterations=%s%>: expected a window size", v);
                return 1;
            }
        } else {
            error("%<lardcc_omp%>: unknown argument %qs", info->argv[i].key);
            return 1;
        }
    }
    struct register_pass_info pass;
    pass.pass = new marks_pass(g);
    pass.reference_pass_name = "omplower";
    pass.ref_pass_instance_number = 1;
    pass.pos_op = PASS_POS_INSERT_AFTER;
    register_callback(info->base_name, PLUGIN_PASS_MANAGER_SETUP, NULL, &pass);
    return 0;
}
