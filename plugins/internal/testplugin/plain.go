package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	sdk "github.com/wendflow/wend/sdk/go"
	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
	"github.com/wendflow/wend/sdk/go/wire"
)

// servePlain serves the Activities service on a unix socket with plain gRPC and prints the
// socket path: the baseline the benchmarks compare the go-plugin host with.
func servePlain(acts sdk.Activities) {
	dir, err := os.MkdirTemp("", "plaingrpc-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	creds := serverCreds()
	s := grpc.NewServer(append(wire.ServerOptions(), grpc.Creds(creds))...)
	pluginv1.RegisterActivitiesServer(s, sdk.NewServer(acts))
	fmt.Println(path + "|" + base64.RawStdEncoding.EncodeToString(serverCertDER))
	_ = s.Serve(l)
}

// serverCreds sets up mTLS the way go-plugin's AutoMTLS does: trust only the client
// certificate passed in PLUGIN_CLIENT_CERT, present a fresh self-signed one (printed with the
// address so the client can pin it).
func serverCreds() credentials.TransportCredentials {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(os.Getenv("PLUGIN_CLIENT_CERT"))) {
		fmt.Fprintln(os.Stderr, "testplugin: plaingrpc needs PLUGIN_CLIENT_CERT")
		os.Exit(1)
	}
	key, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IsCA:        true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		panic(err)
	}
	serverCertDER = der
	return credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		ClientCAs:    pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12,
	})
}

var serverCertDER []byte
