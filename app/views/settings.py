"""Settings: every setting with its value, where it came from and what it does; change one in settings.toml."""

import pandas as pd
import streamlit as st

from engine.cli.settings import SettingError, editable_settings, save_setting, setting_rows
from engine.settings import get_settings

st.title("Settings")
path = get_settings().home / "settings.toml"
st.caption(f"Read from `REFINERY_*` environment variables, then `{path}`, then the defaults; the same list as "
           "`refinery settings`. A value saved here goes into that file; a variable set in the environment still "
           "wins over it. Pages and new runs read the new value at once.")

with st.form("settings_form"):
    name = st.selectbox("Setting", editable_settings(), key="settings_name")
    raw = st.text_input("New value: TOML (0.3, true, [1, 2], { \"gpt-4o-mini\" = [0.15, 0.6] }) or plain text "
                        "(a URL, a name)", key="settings_value")
    if st.form_submit_button("Save to settings.toml", type="primary", icon=":material/save:"):
        try:
            saved = next(r for r in setting_rows(save_setting(name, raw)) if r["name"] == name)
        except SettingError as exc:
            st.error(str(exc), icon=":material/error:")
        else:
            if saved["source"] == "environment":
                st.warning(f"Saved, but `REFINERY_{name.upper()}` is set in the environment and wins over the file.",
                           icon=":material/warning:")
            else:
                st.success(f"Saved: {name} = {saved['value']}", icon=":material/check:")

rows = setting_rows(get_settings())  # after a save: the values now in force
st.dataframe(pd.DataFrame([{**row, "value": str(row["value"])} for row in rows]), hide_index=True, width="stretch",
             key="settings_table")
