"""mqtt-bench report: turns a run (its result file and InfluxDB) into the
tables of the EMQX performance-testing guide and of mqttbs, with charts, a
capacity search and a full-disclosure section."""
