-- Stratified k-fold cross-validation of a learner on a relation, with the
-- reference's folds (its random generator and stratification) and summary.
-- Learner options are passed through as a struct; each learner reads its own.

CREATE OR REPLACE TEMP MACRO dm_cross_validate(learner, tbl, target, folds, seed, confidence,
                                               min_leaf, pruned, subtree_raising,
                                               binary_splits, mdl_correction, collapse,
                                               smoothed, regression_tree, search,
                                               max_parents, score, alpha, use_ad_tree,
                                               min_frequency, weight) AS TABLE
SELECT _dm_cross_validate(
           learner, list(__dm_row ORDER BY __dm_n), target, folds, seed,
           {'confidence': confidence, 'min_leaf': min_leaf, 'pruned': pruned,
            'subtree_raising': subtree_raising, 'binary_splits': binary_splits,
            'mdl_correction': mdl_correction, 'collapse': collapse,
            'smoothed': smoothed, 'regression_tree': regression_tree,
            'search': search, 'max_parents': max_parents, 'score': score,
            'alpha': alpha, 'use_ad_tree': use_ad_tree, 'min_frequency': min_frequency},
           weight, getvariable('duckmine_max_nominal_values')) AS r
FROM dm_rows(tbl);

CREATE OR REPLACE TEMP MACRO cross_validate(learner, tbl, target, folds := 10, seed := 1,
                                            confidence := 0.25, min_leaf := NULL,
                                            pruned := true, subtree_raising := true,
                                            binary_splits := false, mdl_correction := true,
                                            collapse := true, smoothed := true,
                                            regression_tree := false, search := 'k2',
                                            max_parents := 1, score := 'bayes',
                                            alpha := 0.5, use_ad_tree := true,
                                            min_frequency := 1, weight := NULL) AS TABLE
SELECT r.correct, r.incorrect, r.pct_correct, r.pct_incorrect, r.kappa, r.correlation,
       r.mean_absolute_error, r.root_mean_squared_error, r.relative_absolute_error,
       r.root_relative_squared_error, r.instances, r.unclassified, r.missing_class
FROM dm_cross_validate(learner, tbl, target, folds, seed, confidence, min_leaf, pruned,
                       subtree_raising, binary_splits, mdl_correction, collapse, smoothed,
                       regression_tree, search, max_parents, score, alpha, use_ad_tree,
                       min_frequency, weight);

-- The confusion matrix of the same cross-validation: one row per (actual,
-- predicted) pair, with the weight of the test instances that fell there.
CREATE OR REPLACE TEMP MACRO confusion_matrix(learner, tbl, target, folds := 10,
                                              seed := 1, confidence := 0.25,
                                              min_leaf := NULL, pruned := true,
                                              subtree_raising := true,
                                              binary_splits := false,
                                              mdl_correction := true, collapse := true,
                                              smoothed := true, regression_tree := false,
                                              search := 'k2', max_parents := 1,
                                              score := 'bayes', alpha := 0.5,
                                              use_ad_tree := true, min_frequency := 1,
                                              weight := NULL) AS TABLE
SELECT c.actual, c.predicted, c.weight
FROM (SELECT unnest(r.confusion) AS c
      FROM dm_cross_validate(learner, tbl, target, folds, seed, confidence, min_leaf,
                             pruned, subtree_raising, binary_splits, mdl_correction,
                             collapse, smoothed, regression_tree, search, max_parents,
                             score, alpha, use_ad_tree, min_frequency, weight));
