package boltstore

import "testing"

// TestBSDNetworkFS: macOS's and FreeBSD's f_fstypename of a network file system names it; a
// local file system's does not, whatever its NUL padding.
func TestBSDNetworkFS(t *testing.T) {
	pad := func(s string) []byte { b := make([]byte, 16); copy(b, s); return b }
	tests := []struct {
		fstypename []byte
		want       string
		network    bool
	}{
		{pad("nfs"), "NFS", true},
		{pad("smbfs"), "SMB", true},
		{pad("afpfs"), "AFP", true},
		{pad("webdav"), "WebDAV", true},
		{pad("apfs"), "", false},
		{pad("hfs"), "", false},
		{pad("zfs"), "", false},
		{pad("ufs"), "", false},
		{pad("nfsx"), "", false},
		{[]byte("nfs"), "NFS", true}, // no padding
		{pad(""), "", false},
	}
	for _, tt := range tests {
		got, ok := bsdNetworkFS(tt.fstypename)
		if got != tt.want || ok != tt.network {
			t.Errorf("bsdNetworkFS(%q) = %q, %v; want %q, %v", tt.fstypename, got, ok, tt.want, tt.network)
		}
	}
}

// TestUNCPath: a Windows path to a network share is one, in its short and long forms and with
// either slash; a drive path, a long drive path and a device path are not.
func TestUNCPath(t *testing.T) {
	tests := []struct {
		path string
		unc  bool
	}{
		{`\\server\share\wend\wend.db`, true},
		{`//server/share/wend`, true},
		{`\\?\UNC\server\share\wend`, true},
		{`\\?\unc\server\share`, true},
		{`C:\Users\ann\.wend`, false},
		{`\\?\C:\Users\ann\.wend`, false},
		{`\\.\PhysicalDrive0`, false},
		{`\\\triple`, false},
		{`\\`, false},
		{`relative\path`, false},
		{``, false},
	}
	for _, tt := range tests {
		if got := uncPath(tt.path); got != tt.unc {
			t.Errorf("uncPath(%q) = %v, want %v", tt.path, got, tt.unc)
		}
	}
}
