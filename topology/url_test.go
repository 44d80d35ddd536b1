package topology

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMasterURL(t *testing.T) {
	tests := []struct {
		url  string
		want Master
		err  string
	}{
		{"redis://127.0.0.1:7001", Master{Address: "127.0.0.1:7001"}, ""},
		{"redis://localhost", Master{Address: "localhost:6379"}, ""},
		{"redis://user:s3cret@10.0.0.1:6380/2", Master{Address: "10.0.0.1:6380", Username: "user", Password: "s3cret", DB: 2}, ""},
		{"redis://s3cret@h:1", Master{Address: "h:1", Password: "s3cret"}, ""},
		{"rediss://h:6380", Master{Address: "h:6380", TLS: &TLS{}}, ""},
		{"redis://[::1]:7000", Master{Address: "[::1]:7000"}, ""},
		{"http://h:1", Master{}, `scheme "http"`},
		{"redis://:s3cret@h:99999", Master{}, "port"},
		{"redis://h:1/x", Master{}, "db number"},
		// Regression: an unescaped "/" in a password put the rest of it in the error.
		{"redis://u:12/s3cret@h:1", Master{}, "%-escape"},
		{"redis://u:s3cret/x@h:1", Master{}, "not a valid URL"},
		{"redis://u:000000/s3cret@h", Master{}, "the port must be a number"},
		{"redis://h:1?tls=1", Master{}, "query"},
		{"redis:///0", Master{}, "no host"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			got, err := ParseMasterURL(tt.url)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.NotContains(t, err.Error(), "s3cret", "the password never reaches an error")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func FuzzParseMasterURL(f *testing.F) {
	for _, s := range []string{"redis://u:p@h:1/2", "rediss://h", "redis://[::1]:7", "redis://%zz", "x://", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		m, err := ParseMasterURL(raw)
		if err != nil {
			if pw := passwordOf(raw); len(pw) > 3 && strings.Contains(err.Error(), pw) {
				t.Fatalf("error %q contains the password %q", err, pw)
			}
			return
		}
		if m.Address == "" || m.DB < 0 {
			t.Fatalf("accepted %q as %+v", raw, m)
		}
	})
}

// FuzzParseMasterURLUnescaped builds URLs as a user would type them, with the
// password not %-escaped, and checks that no error ever quotes the password.
func FuzzParseMasterURLUnescaped(f *testing.F) {
	f.Add("redis", "user", "12/s3cretpart", "h:1", "/0")
	f.Add("rediss", "", "pa?ss#word", "[::1]:7000", "")
	f.Add("redis", "u", "p@ss:w0rd!", "127.0.0.1", "/x")
	f.Add("redis", "u", "99/99@hostpw", "h", "")
	f.Fuzz(func(t *testing.T, scheme, user, pass, hostPort, path string) {
		raw := scheme + "://" + user + ":" + pass + "@" + hostPort + path
		_, err := ParseMasterURL(raw)
		if err == nil {
			return
		}
		// No 6-byte piece of the password may be in the error, unless it is also
		// elsewhere in the URL or words of the message itself.
		known := scheme + user + hostPort + path + strings.Join(urlErrorTexts, "\n")
		for i := 0; i+6 <= len(pass); i++ {
			piece := pass[i : i+6]
			if !strings.Contains(known, piece) {
				assert.NotContains(t, err.Error(), piece, "URL %q", raw)
			}
		}
	})
}

// urlErrorTexts are the fixed parts of ParseMasterURL's errors.
var urlErrorTexts = []string{
	"not a valid URL: want redis://[user[:password]@]host[:port][/db]",
	"no host: want redis://[user[:password]@]host[:port][/db]",
	"query and fragment are not supported: write tls settings in a tls block",
	"the path after host:port must be a db number >= 0 (%-escape / ? # @ in a password)",
	"the port must be a number in 1..65535 (%-escape / ? # @ in a password)",
	"scheme  want redis:// or rediss://",
}

// passwordOf extracts what looks like the password of a URL, for the fuzz check.
func passwordOf(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	userinfo, _, ok := strings.Cut(rest, "@")
	if !ok {
		return ""
	}
	_, pw, _ := strings.Cut(userinfo, ":")
	return pw
}
