// Invalid options must stop the run before any connection. A benchmark
// script aborts the whole test on a setup error (exit code 108) instead of
// letting k6 log it and go on.
import exec from 'k6/execution';
import mqtt from 'k6/x/mqtt';

export default async function () {
  try {
    const pubs = new mqtt.PublisherGroup({ url: __ENV.MQTT_URL, topic: 'x/{i}', qos: Number(__ENV.QOS) });
    await pubs.connect();
  } catch (e) {
    exec.test.abort(String(e));
  }
}
