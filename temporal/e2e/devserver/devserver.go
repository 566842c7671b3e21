// Package devserver runs a Temporal server (v1.32.2) inside the calling process, on SQLite,
// with the namespace wend uses registered before the first client arrives. It is what the
// end-to-end tests, the benchmark and the wend-temporal-dev command start: a real server
// with real persistence and history replay, without a cluster or a downloaded binary.
package devserver

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	tlog "go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	temporalsrv "go.temporal.io/server/temporal"
)

// Options says where the server listens and keeps its state. The zero value is a
// throw-away server on a free port of 127.0.0.1 with namespace "default".
type Options struct {
	// DBFile is the SQLite file holding the server's state; an existing file is reused, so
	// runs survive a restart. Empty: a file in a fresh temporary directory, removed by Stop.
	DBFile string
	// IP the services bind to; empty means 127.0.0.1.
	IP string
	// Port of the frontend (the address clients and workers dial); 0 picks a free one.
	Port int
	// Namespace registered before the server starts; empty means "default".
	Namespace string
	// LogLevel of the server's own log (debug, info, warn, error); empty means error.
	LogLevel string
	// Dynamic overrides the server's dynamic configuration, key → value.
	Dynamic map[string]any
}

// Server is a started embedded server.
type Server struct {
	srv    temporalsrv.Server
	addr   string
	ns     string
	tmpDir string
}

const clusterName = "active"

// Start sets up the schema (when the file is new), registers the namespace and starts
// every Temporal service in this process. The frontend accepts calls when Start returns.
func Start(opts Options) (*Server, error) {
	ip := opts.IP
	if ip == "" {
		ip = "127.0.0.1"
	}
	ns := opts.Namespace
	if ns == "" {
		ns = "default"
	}
	level := opts.LogLevel
	if level == "" {
		level = "error"
	}
	s := &Server{ns: ns}
	db := opts.DBFile
	if db == "" {
		dir, err := os.MkdirTemp("", "wend-temporal-dev-")
		if err != nil {
			return nil, fmt.Errorf("devserver: temporary directory for the database: %w", err)
		}
		s.tmpDir = dir
		db = filepath.Join(dir, "temporal.db")
	} else if dir := filepath.Dir(db); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("devserver: database %s: directory %s does not exist", db, dir)
		}
	}
	srv, addr, err := s.start(db, ip, opts.Port, ns, level, opts.Dynamic)
	if err != nil {
		s.removeTmp()
		return nil, err
	}
	s.srv, s.addr = srv, addr
	return s, nil
}

func (s *Server) start(db, ip string, port int, ns, level string, dynamic map[string]any) (temporalsrv.Server, string, error) {
	if port == 0 {
		p, err := FreePort(ip)
		if err != nil {
			return nil, "", err
		}
		port = p
	} else if err := portFree(ip, port); err != nil {
		return nil, "", fmt.Errorf("devserver: frontend port %d: %w (choose another with a free port)", port, err)
	}
	// The other services and the frontend's HTTP API need ports too; clients never dial them.
	others := map[string]int{}
	for _, name := range []string{"frontend-http", "history", "matching", "worker"} {
		p, err := FreePort(ip)
		if err != nil {
			return nil, "", err
		}
		others[name] = p
	}
	sqlConf := &config.SQL{
		PluginName:   sqliteplugin.PluginName,
		DatabaseName: db,
		// setup=true creates the schema in a new file and leaves an existing one alone. WAL
		// with synchronous=NORMAL survives a killed process (not a power cut) and spares an
		// fsync per commit: in the default rollback-journal mode one no-op activity took ~50
		// ms here, several fsyncs per state transition.
		ConnectAttributes: map[string]string{"mode": "rwc", "setup": "true", "journal_mode": "wal", "synchronous": "normal"},
	}
	nsConf, err := sqliteschema.NewNamespaceConfig(clusterName, ns, false, nil)
	if err != nil {
		return nil, "", fmt.Errorf("devserver: namespace %q: %w", ns, err)
	}
	// Opening with setup=true creates the tables of a new file. Registering the namespace in
	// the database (not through the API) makes it usable at once: the API's registration
	// reaches the frontend's namespace cache only after a refresh.
	if err := sqliteschema.CreateNamespaces(sqlConf, nsConf); err != nil {
		return nil, "", fmt.Errorf("devserver: register namespace %q in %s: %w", ns, db, err)
	}

	frontend := net.JoinHostPort(ip, strconv.Itoa(port))
	cfg := &config.Config{}
	cfg.Global.Membership.MaxJoinDuration = 30 * time.Second
	cfg.Global.Membership.BroadcastAddress = ip
	cfg.Persistence.DefaultStore = "sqlite"
	cfg.Persistence.VisibilityStore = "sqlite"
	cfg.Persistence.NumHistoryShards = 1
	cfg.Persistence.DataStores = map[string]config.DataStore{"sqlite": {SQL: sqlConf}}
	cfg.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			clusterName: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             frontend,
				HTTPAddress:            net.JoinHostPort(ip, strconv.Itoa(others["frontend-http"])),
				ClusterID:              "wend-dev",
			},
		},
	}
	cfg.DCRedirectionPolicy.Policy = "noop"
	cfg.Services = map[string]config.Service{}
	hosts := map[primitives.ServiceName]static.Hosts{}
	for _, name := range []string{"frontend", "history", "matching", "worker"} {
		var svc config.Service
		p := others[name]
		if name == "frontend" {
			p = port
			svc.RPC.HTTPPort = others["frontend-http"]
		}
		svc.RPC.GRPCPort = p
		svc.RPC.BindOnIP = ip
		cfg.Services[name] = svc
		hosts[primitives.ServiceName(name)] = static.SingleLocalHost(net.JoinHostPort(ip, strconv.Itoa(p)))
	}
	cfg.Archival.History.State = "disabled"
	cfg.Archival.Visibility.State = "disabled"
	cfg.NamespaceDefaults.Archival.History.State = "disabled"
	cfg.NamespaceDefaults.Archival.Visibility.State = "disabled"
	cfg.PublicClient.HostPort = frontend

	dyn := dynamicconfig.StaticClient{
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key(): 8096,
		// wend list and the tests poll visibility; the default 10/s throttles them.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// One partition per task queue, as Temporal's own dev server: with the default 4 a
		// lone worker's pollers and the tasks meet on different partitions and every task
		// waits for a forward.
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():  1,
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): 1,
	}
	for k, v := range dynamic {
		dyn[dynamicconfig.MakeKey(k)] = v
	}
	logger := tlog.NewZapLogger(tlog.BuildZapLogger(tlog.Config{Level: level}))
	srv, err := temporalsrv.NewServer(
		temporalsrv.WithConfig(cfg),
		temporalsrv.ForServices(temporalsrv.DefaultServices),
		temporalsrv.WithStaticHosts(hosts),
		temporalsrv.WithLogger(logger),
		temporalsrv.WithDynamicConfigClient(dyn),
	)
	if err != nil {
		return nil, "", fmt.Errorf("devserver: configure: %w", err)
	}
	if err := srv.Start(); err != nil {
		_ = srv.Stop()
		return nil, "", fmt.Errorf("devserver: start: %w", err)
	}
	return srv, frontend, nil
}

// Addr is the frontend's host:port, what `wend-temporal ... --temporal` takes.
func (s *Server) Addr() string { return s.addr }

// Namespace is the registered namespace.
func (s *Server) Namespace() string { return s.ns }

// Stop stops every service and removes a temporary database.
func (s *Server) Stop() error {
	err := s.srv.Stop()
	s.removeTmp()
	if err != nil {
		return fmt.Errorf("devserver: stop: %w", err)
	}
	return nil
}

func (s *Server) removeTmp() {
	if s.tmpDir != "" {
		_ = os.RemoveAll(s.tmpDir)
		s.tmpDir = ""
	}
}

func portFree(ip string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	return l.Close()
}
