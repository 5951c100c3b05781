// The low-level client: connect, subscribe, publish, receive, end.
//   k6 run k6/extension/examples/hello.js
import { Client } from 'k6/x/mqtt';

export default function () {
  const client = new Client({ client_id: 'k6-hello' });
  client.on('connect', async () => {
    await client.subscribeAsync('greeting', { qos: 1 });
    client.publish('greeting', 'Hello MQTT!', { qos: 1 });
  });
  client.on('message', (topic, payload) => {
    console.log(`${topic}: ${String.fromCharCode.apply(null, new Uint8Array(payload))}`);
    client.end();
  });
  client.on('error', (e) => console.error(e.message));
  client.connect(__ENV.MQTT_URL || 'mqtt://127.0.0.1:1883');
}
