-- The generic model functions. A scored row's model body is passed only where
-- _dm_model_needed says its key (the id and the body's length) is not cached yet
-- (see udfs/models.py).

CREATE OR REPLACE TEMP MACRO _dm_model_key(model) AS model.id || ':' || strlen(model.body);

CREATE OR REPLACE TEMP MACRO predict(model, r) AS
_dm_predict(_dm_model_key(model), CASE WHEN _dm_model_needed(_dm_model_key(model)) THEN model END, r);

-- A numeric model's prediction as a DOUBLE (predict gives the same number as text).
CREATE OR REPLACE TEMP MACRO predict_value(model, r) AS
_dm_predict_value(_dm_model_key(model), CASE WHEN _dm_model_needed(_dm_model_key(model)) THEN model END, r);

-- A density model's log density of the row (em).
CREATE OR REPLACE TEMP MACRO log_likelihood(model, r) AS
_dm_log_likelihood(_dm_model_key(model), CASE WHEN _dm_model_needed(_dm_model_key(model)) THEN model END, r);

CREATE OR REPLACE TEMP MACRO predict_proba(model, r) AS
_dm_predict_proba(_dm_model_key(model), CASE WHEN _dm_model_needed(_dm_model_key(model)) THEN model END, r);

CREATE OR REPLACE TEMP MACRO model_text(model) AS _dm_model_text(model);

-- The model's structure (tree, rules, network) as Graphviz DOT, or drawn as SVG.
CREATE OR REPLACE TEMP MACRO model_dot(model) AS _dm_model_dot(model);
CREATE OR REPLACE TEMP MACRO model_svg(model) AS _dm_model_svg(model);

CREATE OR REPLACE TEMP MACRO model_to_sql(model, dialect := 'duckdb') AS _dm_model_to_sql(model, dialect);

-- What a model is: learner, format version, kind, options, training rows,
-- attributes, target, classes and the functions it answers.
CREATE OR REPLACE TEMP MACRO model_info(model) AS _dm_model_info(model);
