-- AD-trees: cached counts of every conjunction of nominal values.

-- max_depth: the most conditions a query will have (the tree need not be deeper).
CREATE OR REPLACE TEMP MACRO ad_tree_fit(r, leaf_list_cutoff := 0, max_depth := NULL) AS
_dm_ad_tree_fit(list(r), leaf_list_cutoff, max_depth,
                getvariable('duckmine_max_nominal_values'),
                getvariable('duckmine_ad_tree_max_mb'));

-- The number of rows matching every attribute = value pair of conditions (a STRUCT
-- or MAP such as {'humidity': 'high', 'play': 'no'}).
CREATE OR REPLACE TEMP MACRO ad_count(tree, conditions) AS
_dm_ad_count(tree.id, CASE WHEN _dm_model_needed(tree.id) THEN tree END, conditions);

-- The contingency table of the named columns, counted through an AD-tree: one row
-- per combination of their values, zero counts included.
CREATE OR REPLACE TEMP MACRO ad_counts(tbl, columns, leaf_list_cutoff := 0) AS TABLE
SELECT c.combination, c.count
FROM (SELECT unnest(_dm_ad_counts(list(__dm_row ORDER BY __dm_n), columns,
          leaf_list_cutoff, getvariable('duckmine_max_nominal_values'),
          getvariable('duckmine_ad_tree_max_mb'))) AS c
      FROM dm_rows(tbl));

-- Bayesian network classifiers by local score search (k2, tan, hill_climb).
CREATE OR REPLACE TEMP MACRO bayes_net_fit(r, target, search := 'k2', max_parents := 1,
                                           score := 'bayes', alpha := 0.5,
                                           use_ad_tree := true, weight := NULL) AS
_dm_bayes_net_fit(list(r), target, search, max_parents, score, alpha, use_ad_tree,
                  weight, getvariable('duckmine_max_nominal_values'),
                  getvariable('duckmine_ad_tree_max_mb'));

-- The network: one row per entry of each node's conditional probability table.
CREATE OR REPLACE TEMP MACRO bayes_net(tbl, target, search := 'k2', max_parents := 1,
                                       score := 'bayes', alpha := 0.5,
                                       use_ad_tree := true, weight := NULL) AS TABLE
SELECT n.node, n.parents, n.parent_values, n.value, n.probability
FROM (SELECT unnest(_dm_bayes_net_rows(_dm_bayes_net_fit(
          list(__dm_row ORDER BY __dm_n), target, search, max_parents, score, alpha,
          use_ad_tree, weight, getvariable('duckmine_max_nominal_values'),
          getvariable('duckmine_ad_tree_max_mb')))) AS n
      FROM dm_rows(tbl));

-- Averaged one-dependence estimators.
CREATE OR REPLACE TEMP MACRO aode_fit(r, target, min_frequency := 1, weight := NULL) AS
_dm_aode_fit(list(r), target, min_frequency, weight,
             getvariable('duckmine_max_nominal_values'));

-- Per class and attribute value: the class prior, the weight of its training rows
-- and whether the value serves as a superparent.
CREATE OR REPLACE TEMP MACRO aode(tbl, target, min_frequency := 1, weight := NULL) AS TABLE
SELECT s.class, s.prior, s.attribute, s.value, s.count, s.superparent
FROM (SELECT unnest(_dm_aode_rows(_dm_aode_fit(
          list(__dm_row ORDER BY __dm_n), target, min_frequency, weight,
          getvariable('duckmine_max_nominal_values')))) AS s
      FROM dm_rows(tbl));
