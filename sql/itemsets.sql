-- Frequent itemsets and association rules (FP-growth).

CREATE OR REPLACE TEMP MACRO fp_growth(tbl, min_support, max_length := NULL,
                                       target := 'all', layout := 'auto') AS TABLE
SELECT r.itemset, r.support_count, r.support
FROM (SELECT unnest(_dm_itemsets(tx, items, min_support,
                                 max_length, target,
                                 getvariable('duckmine_max_itemsets'),
                                 _dm_settings().memory_limit,
                                 getvariable('duckmine_connection'))) AS r
      FROM _dm_baskets(tbl, 'fp_growth', layout := layout))
ORDER BY r.support_count DESC, len(r.itemset), r.itemset;

CREATE OR REPLACE TEMP MACRO association_rules(tbl, min_support, min_confidence := 0.9,
                                               max_length := NULL, max_consequent := NULL,
                                               layout := 'auto') AS TABLE
SELECT r.antecedent, r.consequent, r.support_count, r.support, r.confidence, r.lift,
       r.leverage, r.conviction
FROM (SELECT unnest(_dm_rules(tx, items, min_support,
                              min_confidence, max_length, max_consequent,
                              getvariable('duckmine_max_itemsets'),
                              _dm_settings().memory_limit,
                              getvariable('duckmine_connection'))) AS r
      FROM _dm_baskets(tbl, 'association_rules', layout := layout))
ORDER BY r.confidence DESC, r.support_count DESC, r.antecedent, r.consequent;

-- Aggregate forms: one transaction (a list of items) per input row; with GROUP BY
-- each group is mined on its own. They return lists of the same structs.
CREATE OR REPLACE TEMP MACRO fp_growth_agg(items, min_support, max_length := NULL,
                                           target := 'all') AS
_dm_itemsets_agg(list(items::VARCHAR[]), min_support, max_length,
                 target, getvariable('duckmine_max_itemsets'),
                 _dm_settings().memory_limit, getvariable('duckmine_connection'));

CREATE OR REPLACE TEMP MACRO association_rules_agg(items, min_support,
                                                   min_confidence := 0.9,
                                                   max_length := NULL,
                                                   max_consequent := NULL) AS
_dm_rules_agg(list(items::VARCHAR[]), min_support, min_confidence,
              max_length, max_consequent, getvariable('duckmine_max_itemsets'),
              _dm_settings().memory_limit, getvariable('duckmine_connection'));
