-- C4.5 decision trees. The rows of a table reach the learner as one list of row
-- structs (list(t)), whatever the schema; under GROUP BY, one list per group.

CREATE OR REPLACE TEMP MACRO c45_fit(r, target, confidence := 0.25, min_leaf := 2,
                                     pruned := true, subtree_raising := true,
                                     binary_splits := false, mdl_correction := true,
                                     collapse := true, weight := NULL) AS
_dm_c45_fit(list(r), target, confidence, min_leaf, pruned, subtree_raising,
            binary_splits, mdl_correction, collapse, weight,
            getvariable('duckmine_max_nominal_values'));

CREATE OR REPLACE TEMP MACRO c45(tbl, target, confidence := 0.25, min_leaf := 2,
                                 pruned := true, subtree_raising := true,
                                 binary_splits := false, mdl_correction := true,
                                 collapse := true, weight := NULL) AS TABLE
SELECT n.node, n.parent, n.depth, n.attribute, n.operator, n.value, n.is_leaf,
       n.class, n.weight, n.errors, n.distribution
FROM (SELECT unnest(_dm_tree_nodes(_dm_c45_fit(
          list(__dm_row ORDER BY __dm_n), target, confidence, min_leaf, pruned,
          subtree_raising, binary_splits, mdl_correction, collapse, weight,
          getvariable('duckmine_max_nominal_values')))) AS n
      FROM dm_rows(tbl))
ORDER BY n.node;

-- From trees to rules: one rule per leaf, conditions deleted greedily while the
-- pessimistic error estimate does not get worse, duplicates removed.
CREATE OR REPLACE TEMP MACRO c45_rules(tbl, target, confidence := 0.25, min_leaf := 2,
                                       pruned := true, subtree_raising := true,
                                       binary_splits := false, mdl_correction := true,
                                       collapse := true, weight := NULL) AS TABLE
SELECT r.rule, r.conditions, r.class, r.coverage, r.errors, r.error_estimate
FROM (SELECT unnest(_dm_c45_rules(list(__dm_row ORDER BY __dm_n), target, confidence, min_leaf, pruned,
                                  subtree_raising, binary_splits, mdl_correction,
                                  collapse, weight,
                                  getvariable('duckmine_max_nominal_values'))) AS r
      FROM dm_rows(tbl))
ORDER BY r.rule;
