package interop;

import java.util.LinkedHashMap;
import java.util.Map;

/** {@code key=value} and {@code --key value} / {@code --flag} command-line arguments. */
final class Args {
    private Args() {}

    static Map<String, String> parse(String[] args) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String s = args[i];
            if (s.startsWith("--")) {
                String k = s.substring(2);
                int eq = k.indexOf('=');
                if (eq >= 0) {
                    m.put(k.substring(0, eq), k.substring(eq + 1));
                } else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
                    m.put(k, args[++i]);
                } else {
                    m.put(k, "true");
                }
            } else {
                int eq = s.indexOf('=');
                if (eq < 0) throw new IllegalArgumentException("expected key=value: " + s);
                m.put(s.substring(0, eq), s.substring(eq + 1));
            }
        }
        return m;
    }
}
