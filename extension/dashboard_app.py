"""The script ``streamlit run`` runs for ``duckmine dashboard``."""

from duckmine.extension.dashboard import page

page()
