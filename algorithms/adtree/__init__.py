"""AD-trees (the book's section 6.7): cached counts of every conjunction of nominal
values, kept as a model value for ad_count."""

from ..contract import Learner, whole

LEARNERS = (
    Learner(
        name="ad_tree", kind="counter", package=__name__, weights=False,
        doc="an AD-tree of every column, for counts by ad_count",
        params=(
            whole("leaf_list_cutoff", 0, "nodes with fewer rows keep their row list "
                  "instead of children", low=0),
            whole("max_depth", None, "most conditions a query will have (NULL: any)",
                  low=1, nullable=True)),
        fit="tree:fit", model="tree:ADTreeModel", capabilities=("model_text", "model_dot")),
)
