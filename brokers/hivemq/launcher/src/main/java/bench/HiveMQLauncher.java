package bench;

import com.hivemq.embedded.EmbeddedExtension;
import com.hivemq.embedded.EmbeddedHiveMQ;
import com.hivemq.extension.sdk.api.ExtensionMain;
import com.hivemq.extension.sdk.api.auth.SimpleAuthenticator;
import com.hivemq.extension.sdk.api.parameter.ExtensionStartInput;
import com.hivemq.extension.sdk.api.parameter.ExtensionStartOutput;
import com.hivemq.extension.sdk.api.parameter.ExtensionStopInput;
import com.hivemq.extension.sdk.api.parameter.ExtensionStopOutput;
import com.hivemq.extension.sdk.api.services.Services;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.dropwizard.DropwizardExports;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.HexFormat;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;

/**
 * The native stack's HiveMQ CE: the embedded broker started with the project's config.xml (as
 * mqttbench/brokers/native.py rewrote it), its Dropwizard MetricRegistry served in the Prometheus text
 * format on 127.0.0.1, since HiveMQ CE itself has no Prometheus endpoint.
 *
 * <p>Usage: HiveMQLauncher CONFIG_XML TLS_DIR METRICS_PORT, or --version. Its working files (conf,
 * data, the key stores) go to a folder "hivemq" beside CONFIG_XML, in the stack's state directory.
 */
public final class HiveMQLauncher {

    private HiveMQLauncher() {}

    public static void main(final String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("--version")) {
            // The embedded jar's manifest carries the release (HiveMQ-Version).
            System.out.println("HiveMQ " + EmbeddedHiveMQ.class.getPackage().getImplementationVersion());
            return;
        }
        if (args.length != 3) {
            System.err.println("usage: HiveMQLauncher CONFIG_XML TLS_DIR METRICS_PORT | --version");
            System.exit(2);
        }
        final Path config = Path.of(args[0]).toAbsolutePath();
        final Path tls = Path.of(args[1]);
        final int metricsPort = Integer.parseInt(args[2]);
        final Path home = config.resolveSibling("hivemq");
        final Path conf = Files.createDirectories(home.resolve("conf"));
        final Path stores = Files.createDirectories(home.resolve("tls"));
        Files.copy(config, conf.resolve("config.xml"), StandardCopyOption.REPLACE_EXISTING);

        // HiveMQ reads TLS from Java key stores; the stack keeps PEM files. A fresh password each
        // start reaches config.xml's ${HIVEMQ_KEYSTORE_PASSWORD} as a system property (HiveMQ's
        // placeholders read those before the environment), never argv or a file.
        final byte[] secret = new byte[16];
        new SecureRandom().nextBytes(secret);
        final String password = HexFormat.of().formatHex(secret);
        writeKeyStore(tls, stores.resolve("keystore.p12"), password);
        writeTrustStore(tls, stores.resolve("truststore.p12"), password);
        System.setProperty("HIVEMQ_KEYSTORE_PASSWORD", password);
        System.setProperty("HIVEMQ_KEYSTORE", stores.resolve("keystore.p12").toString());
        System.setProperty("HIVEMQ_TRUSTSTORE", stores.resolve("truststore.p12").toString());

        refuseUnreadable(conf.resolve("config.xml"));

        final EmbeddedHiveMQ hivemq = EmbeddedHiveMQ.builder()
                .withConfigurationFolder(conf)
                .withDataFolder(Files.createDirectories(home.resolve("data")))
                .withExtensionsFolder(Files.createDirectories(home.resolve("extensions")))
                .withEmbeddedExtension(allowAll())
                .build();
        hivemq.start().join();

        final PrometheusRegistry registry = new PrometheusRegistry();
        DropwizardExports.builder().dropwizardRegistry(hivemq.getMetricRegistry()).register(registry);
        final HTTPServer server = HTTPServer.builder()
                .hostname("127.0.0.1")
                .port(metricsPort)
                .registry(registry)
                .buildAndStart();
        System.out.println("HiveMQ metrics: http://127.0.0.1:" + server.getPort() + "/metrics");

        // scripts/stack.sh stops the broker with TERM: stop HiveMQ cleanly, then exit.
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            hivemq.stop().join();
            stopped.countDown();
        }));
        stopped.await();
    }

    /**
     * HiveMQ starts with its default config (a listener on 0.0.0.0:1883) when it cannot read
     * config.xml or a placeholder is unset, saying so at ERROR level only: fail before that instead.
     */
    private static void refuseUnreadable(final Path xml) throws Exception {
        final Matcher m = Pattern.compile("\\$\\{(ENV:)*(.*?)}").matcher(Files.readString(xml));
        while (m.find()) {
            if (System.getProperty(m.group(2)) == null && System.getenv(m.group(2)) == null) {
                throw new IllegalStateException(xml + ": nothing sets " + m.group(0));
            }
        }
        DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(xml.toFile());
    }

    /**
     * What the image's hivemq-allow-all-extension does: HiveMQ CE refuses every client while no
     * extension authenticates them, and the benchmarks use anonymous clients.
     */
    private static EmbeddedExtension allowAll() {
        final SimpleAuthenticator allow = (in, out) -> out.authenticateSuccessfully();
        return EmbeddedExtension.builder()
                .withId("mqtt-bench-allow-all")
                .withName("mqtt-bench allow all clients")
                .withVersion("1")
                .withAuthor("mqtt-bench")
                .withExtensionMain(new ExtensionMain() {
                    @Override
                    public void extensionStart(final ExtensionStartInput in, final ExtensionStartOutput out) {
                        Services.securityRegistry().setAuthenticatorProvider(provider -> allow);
                    }

                    @Override
                    public void extensionStop(final ExtensionStopInput in, final ExtensionStopOutput out) {}
                })
                .build();
    }

    /** server.key (PKCS#8 PEM, as openssl req -nodes writes it) and server.pem with the CA. */
    private static void writeKeyStore(final Path tls, final Path out, final String password) throws Exception {
        final CertificateFactory x509 = CertificateFactory.getInstance("X.509");
        final Certificate server;
        final Certificate ca;
        try (var s = Files.newInputStream(tls.resolve("server.pem"));
                var c = Files.newInputStream(tls.resolve("ca.pem"))) {
            server = x509.generateCertificate(s);
            ca = x509.generateCertificate(c);
        }
        final String pem = Files.readString(tls.resolve("server.key"), StandardCharsets.US_ASCII);
        final byte[] der = Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""));
        final PrivateKey key = KeyFactory.getInstance(server.getPublicKey().getAlgorithm())
                .generatePrivate(new PKCS8EncodedKeySpec(der));
        final KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("broker", key, password.toCharArray(), new Certificate[] {server, ca});
        store(ks, out, password);
    }

    /** ca.pem as the one trusted certificate: the mutual-TLS listener's client CA. */
    private static void writeTrustStore(final Path tls, final Path out, final String password) throws Exception {
        final KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        try (var c = Files.newInputStream(tls.resolve("ca.pem"))) {
            ks.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(c));
        }
        store(ks, out, password);
    }

    private static void store(final KeyStore ks, final Path out, final String password) throws Exception {
        try (OutputStream o = Files.newOutputStream(out)) {
            ks.store(o, password.toCharArray());
        }
    }
}
