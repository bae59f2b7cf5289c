"""The campaign's memory: corpus entries (a program's choice sequence and the features it
reached, `entry`), and the databases that hold entries and findings for one machine or many
(`db`)."""
