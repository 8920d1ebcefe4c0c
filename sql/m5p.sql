-- M5' model trees and M5 rules for a numeric target. As for C4.5, the rows reach
-- the learner as one list of row structs (one list per group under GROUP BY).

CREATE OR REPLACE TEMP MACRO m5p_fit(r, target, min_leaf := 4, pruned := true,
                                     smoothed := true, regression_tree := false,
                                     weight := NULL) AS
_dm_m5p_fit(list(r), target, min_leaf, pruned, smoothed, regression_tree, weight,
            getvariable('duckmine_max_nominal_values'));

CREATE OR REPLACE TEMP MACRO m5_rules_fit(r, target, min_leaf := 4, pruned := true,
                                          smoothed := true, regression_tree := false,
                                          weight := NULL) AS
_dm_m5_rules_fit(list(r), target, min_leaf, pruned, smoothed, regression_tree, weight,
                 getvariable('duckmine_max_nominal_values'));

-- The tree: one row per node; a leaf carries its (smoothed) linear model.
CREATE OR REPLACE TEMP MACRO m5p(tbl, target, min_leaf := 4, pruned := true,
                                 smoothed := true, regression_tree := false,
                                 weight := NULL) AS TABLE
SELECT n.node, n.parent, n.depth, n.attribute, n.operator, n.value, n.is_leaf, n.model,
       n.instances, n.error_pct, n.intercept, n.coefficients
FROM (SELECT unnest(_dm_m5p_nodes(_dm_m5p_fit(
          list(__dm_row ORDER BY __dm_n), target, min_leaf, pruned, smoothed,
          regression_tree, weight, getvariable('duckmine_max_nominal_values')))) AS n
      FROM dm_rows(tbl))
ORDER BY n.node;

-- Rules from model trees: the decision list, first matching rule first.
CREATE OR REPLACE TEMP MACRO m5_rules(tbl, target, min_leaf := 4, pruned := true,
                                      smoothed := true, regression_tree := false,
                                      weight := NULL) AS TABLE
SELECT r.rule, r.conditions, r.intercept, r.coefficients, r.coverage, r.error_pct
FROM (SELECT unnest(_dm_m5_rules_list(_dm_m5_rules_fit(
          list(__dm_row ORDER BY __dm_n), target, min_leaf, pruned, smoothed,
          regression_tree, weight, getvariable('duckmine_max_nominal_values')))) AS r
      FROM dm_rows(tbl))
ORDER BY r.rule;
