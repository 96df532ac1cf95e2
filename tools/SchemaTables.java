// Writes the message tables of kafkit's `kafka-dump-log` (src/cli/dump_log/schema/*.rs) from the
// generated message classes of a Kafka release, so that the tool reads and prints coordinator
// records and KRaft messages with the exact fields, versions and defaults of that release.
//
// tools/schema-tables.sh runs it for every table:
//
//   java -cp 'target/kafka-4.3.1/libs/*' tools/SchemaTables.java DESCRIPTION CLASS... > FILE
//
// It reads each class's per-version schemas (SCHEMAS), its fields in declaration order (the
// order of Kafka's JSON output) and the defaults a new instance holds; nothing else.
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.types.ArrayOf;
import org.apache.kafka.common.protocol.types.BoundField;
import org.apache.kafka.common.protocol.types.CompactArrayOf;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.TaggedFields;
import org.apache.kafka.common.protocol.types.Type;

public class SchemaTables {
    private final StringBuilder out = new StringBuilder();
    private final Map<String, String> emitted = new LinkedHashMap<>();

    static String norm(String s) {
        return s.replace("_", "").toLowerCase(Locale.ROOT);
    }

    static String constName(String s) {
        return s.replaceAll("([a-z0-9])([A-Z])", "$1_$2").replace("$", "__").toUpperCase(Locale.ROOT);
    }

    /** The schema field of a version for a Java field, with its tag (or -1) . */
    record Found(org.apache.kafka.common.protocol.types.Field field, int tag) { }

    @SuppressWarnings("unchecked")
    static Found find(Schema s, String javaName) throws Exception {
        for (BoundField f : s.fields()) {
            if (f.def.type instanceof TaggedFields tf) {
                Field m = TaggedFields.class.getDeclaredField("fields");
                m.setAccessible(true);
                for (var e : ((Map<Integer, org.apache.kafka.common.protocol.types.Field>) m.get(tf)).entrySet()) {
                    if (norm(e.getValue().name).equals(norm(javaName))) return new Found(e.getValue(), e.getKey());
                }
            } else if (norm(f.def.name).equals(norm(javaName))) {
                return new Found(f.def, -1);
            }
        }
        return null;
    }

    static boolean flexible(Schema s) {
        for (BoundField f : s.fields()) if (f.def.type instanceof TaggedFields) return true;
        return false;
    }

    static Class<?> elementClass(Field f) {
        if (f.getGenericType() instanceof ParameterizedType p) return (Class<?>) p.getActualTypeArguments()[0];
        // Kafka's keyed collections extend ImplicitLinkedHashMultiCollection<Element>.
        ParameterizedType p = (ParameterizedType) f.getType().getGenericSuperclass();
        return (Class<?>) p.getActualTypeArguments()[0];
    }

    String ty(Type t, boolean[] nullable, Field javaField, String owner) throws Exception {
        String n = t.toString();
        if (t instanceof ArrayOf || t instanceof CompactArrayOf) {
            nullable[0] = t.isNullable();
            Type e = t.arrayElementType().get();
            if (e instanceof Schema) return "Ty::Array(&Ty::Struct(" + structFields(elementClass(javaField), owner) + "))";
            return "Ty::Array(&" + ty(e, new boolean[1], null, owner) + ")";
        }
        if (t instanceof Schema) {
            nullable[0] = t.isNullable();
            return "Ty::Struct(" + structFields(javaField.getType(), owner) + ")";
        }
        nullable[0] = n.contains("NULLABLE");
        if (n.endsWith("STRING")) return "Ty::Str";
        if (n.endsWith("BYTES")) return "Ty::Bytes";
        return switch (n) {
            case "INT8" -> "Ty::Int8";
            case "INT16" -> "Ty::Int16";
            case "INT32" -> "Ty::Int32";
            case "INT64" -> "Ty::Int64";
            case "UINT16" -> "Ty::Uint16";
            case "FLOAT64" -> "Ty::Float64";
            case "BOOLEAN" -> "Ty::Bool";
            case "UUID" -> "Ty::Uuid";
            default -> throw new IllegalStateException("type " + n + " in " + owner);
        };
    }

    static String dflt(Object v) {
        if (v == null) return "Dflt::Null";
        if (v instanceof Boolean b) return "Dflt::Bool(" + b + ")";
        if (v instanceof Double d) return "Dflt::Float(" + d + ")";
        if (v instanceof Number n) return "Dflt::Int(" + n.longValue() + ")";
        if (v instanceof String s) return "Dflt::Str(" + quote(s) + ")";
        if (v instanceof Uuid u && u.equals(Uuid.ZERO_UUID)) return "Dflt::Empty";
        if (v instanceof byte[] b && b.length == 0) return "Dflt::Empty";
        if (v instanceof Collection<?> c && c.isEmpty()) return "Dflt::Empty";
        if (v instanceof Message) return "Dflt::Struct";
        throw new IllegalStateException("kafkit's tables have no default " + v + " (add it)");
    }

    static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** The name of the constant holding the fields of `c`, emitting it first if need be. */
    String structFields(Class<?> c, String owner) throws Exception {
        String name = constName(c.getName().substring(c.getName().lastIndexOf('.') + 1)) + "_FIELDS";
        String previous = emitted.putIfAbsent(name, c.getName());
        if (previous != null) {
            // Two classes of one simple name would silently share the first one's fields.
            if (!previous.equals(c.getName())) {
                throw new IllegalStateException(name + " names both " + previous + " and " + c.getName());
            }
            return name;
        }
        Class<?> top = c.getDeclaringClass() == null ? c : c.getDeclaringClass();
        Schema[] schemas = (Schema[]) c.getField("SCHEMAS").get(null);
        Object fresh = c.getConstructor().newInstance();
        StringBuilder b = new StringBuilder();
        b.append("pub static ").append(name).append(": &[Field] = &[\n");
        for (Field jf : c.getDeclaredFields()) {
            // Keyed collections add private links (next, prev): not fields of the message.
            if (Modifier.isStatic(jf.getModifiers()) || Modifier.isPrivate(jf.getModifiers()) || jf.getName().startsWith("_")) continue;
            jf.setAccessible(true);
            long versions = 0, nullable = 0, tagged = 0;
            int tag = -1;
            String type = null;
            for (int v = 0; v < schemas.length; v++) {
                if (schemas[v] == null) continue;
                Found f = find(schemas[v], jf.getName());
                if (f == null) continue;
                versions |= 1L << v;
                boolean[] isNull = new boolean[1];
                String t = ty(f.field().type, isNull, jf, top.getSimpleName());
                if (type != null && !type.equals(t)) throw new IllegalStateException(jf + " changes type");
                type = t;
                if (isNull[0]) nullable |= 1L << v;
                if (f.tag() >= 0) {
                    tagged |= 1L << v;
                    tag = f.tag();
                }
            }
            if (type == null) throw new IllegalStateException(jf + " is in no version");
            b.append("    Field::new(").append(quote(jf.getName())).append(", ").append(type)
                .append(", ").append(hex(versions)).append(")");
            if (nullable != 0) b.append(".nullable(").append(hex(nullable)).append(")");
            if (tagged != 0) b.append(".tagged(").append(tag).append(", ").append(hex(tagged)).append(")");
            String d = dflt(jf.get(fresh));
            if (!d.equals(zeroFor(type))) b.append(".default(").append(d).append(")");
            b.append(",\n");
        }
        b.append("];\n\n");
        out.append(b);
        return name;
    }

    /** The default a field of this type has unless the table says otherwise. */
    static String zeroFor(String type) {
        if (type.startsWith("Ty::Int") || type.startsWith("Ty::Uint")) return "Dflt::Int(0)";
        return switch (type) {
            case "Ty::Str" -> "Dflt::Str(\"\")";
            case "Ty::Bool" -> "Dflt::Bool(false)";
            case "Ty::Float64" -> "Dflt::Float(0.0)";
            default -> type.startsWith("Ty::Struct") ? "Dflt::Struct" : "Dflt::Empty";
        };
    }

    static String hex(long mask) {
        return "0x" + Long.toHexString(mask);
    }

    void message(String className) throws Exception {
        Class<?> c = Class.forName(className);
        Schema[] schemas = (Schema[]) c.getField("SCHEMAS").get(null);
        long flexible = 0, versions = 0;
        for (int v = 0; v < schemas.length; v++) {
            if (schemas[v] == null) continue;
            versions |= 1L << v;
            if (flexible(schemas[v])) flexible |= 1L << v;
        }
        String fields = structFields(c, c.getSimpleName());
        out.append("pub static ").append(constName(c.getSimpleName())).append(": Message = Message {\n")
            .append("    versions: ").append(hex(versions)).append(",\n")
            .append("    flexible: ").append(hex(flexible)).append(",\n")
            .append("    fields: ").append(fields).append(",\n};\n\n");
    }

    public static void main(String[] args) throws Exception {
        SchemaTables t = new SchemaTables();
        for (int i = 1; i < args.length; i++) t.message(args[i]);
        System.out.print("//! " + args[0] + ".\n//!\n//! Generated by tools/schema-tables.sh from Kafka's message classes; do not edit.\n\n");
        System.out.print(t.out.indexOf("Dflt::") >= 0 ? "use super::{Dflt, Field, Message, Ty};\n\n" : "use super::{Field, Message, Ty};\n\n");
        System.out.print(t.out.toString().replaceAll("\n+$", "\n"));
    }
}
