-- Frequent itemsets and association rules (FP-growth). DuckDB counts the items
-- (the first pass, in parallel next to the data); _dm_itemsets and _dm_rules
-- build the FP-tree and mine it.

CREATE OR REPLACE TEMP MACRO dm_frequent_items(tbl, min_support, layout, fn) AS TABLE
WITH tx AS (FROM dm_transactions(tbl, layout := layout)),
threshold AS (
    SELECT _dm_min_count(min_support, typeof(min_support), count(*), fn) AS c FROM tx
),
counts AS (
    SELECT item, count(*) AS c
    FROM (SELECT unnest(list_distinct(items)) AS item FROM tx) GROUP BY item
)
SELECT (SELECT list(items) FROM tx) AS tx,
       coalesce((SELECT list(item ORDER BY c DESC, item) FROM counts
                 WHERE c >= (SELECT c FROM threshold)), []) AS frequent;

CREATE OR REPLACE TEMP MACRO fp_growth(tbl, min_support, max_length := NULL,
                                       target := 'all', layout := 'auto') AS TABLE
SELECT r.itemset, r.support_count, r.support
FROM (SELECT unnest(_dm_itemsets(tx, frequent, min_support, typeof(min_support),
                                 max_length, target,
                                 getvariable('duckmine_max_itemsets'))) AS r
      FROM dm_frequent_items(tbl, min_support, layout, 'fp_growth'))
ORDER BY r.support_count DESC, len(r.itemset), r.itemset;

CREATE OR REPLACE TEMP MACRO association_rules(tbl, min_support, min_confidence := 0.9,
                                               max_length := NULL, max_consequent := NULL,
                                               layout := 'auto') AS TABLE
SELECT r.antecedent, r.consequent, r.support_count, r.support, r.confidence, r.lift,
       r.leverage, r.conviction
FROM (SELECT unnest(_dm_rules(tx, frequent, min_support, typeof(min_support),
                              min_confidence, max_length, max_consequent,
                              getvariable('duckmine_max_itemsets'))) AS r
      FROM dm_frequent_items(tbl, min_support, layout, 'association_rules'))
ORDER BY r.confidence DESC, r.support_count DESC, r.antecedent, r.consequent;

-- Aggregate forms: one transaction (a list of items) per input row; with GROUP BY
-- each group is mined on its own. They return lists of the same structs.
CREATE OR REPLACE TEMP MACRO fp_growth_agg(items, min_support, max_length := NULL,
                                           target := 'all') AS
_dm_itemsets(list(items::VARCHAR[]), NULL, min_support, typeof(min_support), max_length,
             target, getvariable('duckmine_max_itemsets'));

CREATE OR REPLACE TEMP MACRO association_rules_agg(items, min_support,
                                                   min_confidence := 0.9,
                                                   max_length := NULL,
                                                   max_consequent := NULL) AS
_dm_rules(list(items::VARCHAR[]), NULL, min_support, typeof(min_support), min_confidence,
          max_length, max_consequent, getvariable('duckmine_max_itemsets'));
