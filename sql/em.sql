-- Clustering: EM (finite mixture models) and k-means. All columns of the relation
-- are clustered, except those named in exclude.

CREATE OR REPLACE TEMP MACRO em_fit(r, k := -1, max_iterations := 100, seed := 100,
                                    min_stddev := 1e-6, exclude := [],
                                    weight := NULL) AS
_dm_em_fit(list(r), k, max_iterations, seed, min_stddev, exclude, weight,
           getvariable('duckmine_max_nominal_values'));

CREATE OR REPLACE TEMP MACRO kmeans_fit(r, k, seed := 10, init := 'k-means++',
                                        max_iterations := 500, exclude := [],
                                        weight := NULL) AS
_dm_kmeans_fit(list(r), k, seed, init, max_iterations, exclude, weight,
               getvariable('duckmine_max_nominal_values'));

-- The mixture: per cluster its prior, per attribute the mean and standard deviation
-- (numeric) or each value's count and probability (nominal); with the model's
-- log-likelihood and number of clusters.
CREATE OR REPLACE TEMP MACRO em(tbl, k := -1, max_iterations := 100, seed := 100,
                                min_stddev := 1e-6, exclude := [], weight := NULL) AS TABLE
SELECT c.cluster, c.prior, c.attribute, c.value, c.mean, c.std_dev, c.count,
       c.probability, c.log_likelihood, c.num_clusters
FROM (SELECT unnest(_dm_em_rows(_dm_em_fit(
          list(__dm_row ORDER BY __dm_n), k, max_iterations, seed, min_stddev, exclude,
          weight, getvariable('duckmine_max_nominal_values')))) AS c
      FROM dm_rows(tbl));

-- The centres: per cluster its size and each attribute's value (label for nominal
-- attributes), with the within-cluster sum of squared errors.
CREATE OR REPLACE TEMP MACRO kmeans(tbl, k, seed := 10, init := 'k-means++',
                                    max_iterations := 500, exclude := [],
                                    weight := NULL) AS TABLE
SELECT c.cluster, c.size, c.attribute, c.value, c.label, c.sse
FROM (SELECT unnest(_dm_kmeans_rows(_dm_kmeans_fit(
          list(__dm_row ORDER BY __dm_n), k, seed, init, max_iterations, exclude, weight,
          getvariable('duckmine_max_nominal_values')))) AS c
      FROM dm_rows(tbl));
