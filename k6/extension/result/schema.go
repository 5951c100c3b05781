package result

import (
	"encoding/json"
	"reflect"
	"strings"
)

// Schema is the JSON Schema (2020-12) of the result file, generated from
// Result: a property per field, required unless omitempty or a merge-only
// fact, null allowed where the field is a pointer, and no property beyond
// the type's at its top level. mqttbench/generated/result_schema.py writes it to
// result.schema.json, and checks that the committed one is current.
func Schema() map[string]any {
	s := schemaOf(reflect.TypeFor[Result](), map[reflect.Type]bool{})
	// The schema strings, so that readers take them from this file.
	s["properties"].(map[string]any)["schema"] = map[string]any{"type": "string", "enum": []string{ResultSchema, InstanceSchema}}
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["$id"] = "https://github.com/mqtt-bench/mqtt-bench/k6/extension/result/result.schema.json"
	s["title"] = "mqtt-bench result (" + ResultSchema + ", " + InstanceSchema + ")"
	s["description"] = "Generated from k6/extension/result.Result: do not edit. " +
		"Single-run and instance results, and merged ones (the merge-only facts are under the optional property merge)."
	return s
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// ownSchema is a type whose JSON is not its fields (a row written as an
// array): it says its schema itself.
type ownSchema interface{ JSONSchema() map[string]any }

func schemaOf(t reflect.Type, seen map[reflect.Type]bool) map[string]any {
	if t == rawMessage || t.Kind() == reflect.Interface {
		return map[string]any{}
	}
	if o, ok := reflect.Zero(t).Interface().(ownSchema); ok {
		return o.JSONSchema()
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := schemaOf(t.Elem(), seen)
		if typ, ok := s["type"].(string); ok {
			s["type"] = []string{typ, "null"}
		}
		return s
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		// A nil slice encodes as null.
		return map[string]any{"type": []string{"array", "null"}, "items": schemaOf(t.Elem(), seen)}
	case reflect.Map:
		return map[string]any{"type": []string{"object", "null"}, "additionalProperties": schemaOf(t.Elem(), seen)}
	case reflect.Struct:
		props, required := map[string]any{}, []string{}
		fields(t, props, &required, seen)
		return map[string]any{"type": "object", "properties": props, "required": required,
			"additionalProperties": false}
	}
	panic("result.Schema: no schema for " + t.String())
}

// fields adds t's JSON properties; those of an embedded struct (a
// delivery's Group) are inline.
func fields(t reflect.Type, props map[string]any, required *[]string, seen map[reflect.Type]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			fields(ft, props, required, seen)
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = schemaOf(f.Type, seen)
		if !strings.Contains(opts, "omitempty") {
			*required = append(*required, name)
		}
	}
}
