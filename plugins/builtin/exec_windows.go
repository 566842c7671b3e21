package builtin

import (
	"fmt"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/wendflow/wend/plugins/cmdgroup"
)

// platformEnv are the variables Windows programs need to start at all.
var platformEnv = []string{"SYSTEMROOT", "COMSPEC", "PATHEXT", "TEMP", "TMP"}

func shellArgv(argv []string) []string { return []string{"cmd.exe"} }

// shellLine gives cmd.exe its whole command line (cmdLine): Go's own quoting of arguments
// follows the C runtime's rules, which cmd.exe does not read.
func shellLine(cmd *exec.Cmd, argv []string) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: cmdLine(argv[0], argv[1:])}
}

// group is a started command's job object.
type group struct{ job windows.Handle }

// startGroup starts cmd suspended, puts it in a job object of its own created with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, then lets it run: every process it starts joins the job,
// a cancel terminates the job, and when the plugin dies (the host's job ends it with the host)
// the system closes the job's only handle and ends them all. Windows keeps no records.
func startGroup(cmd *exec.Cmd, _ *cmdgroup.Dir, _ string) (*group, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("job object: %w", err)
	}
	g := &group{job: job}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED
	cmd.Cancel = func() error { return windows.TerminateJobObject(job, 1) }
	if err := cmd.Start(); err != nil {
		windows.CloseHandle(job)
		return nil, err
	}
	if err := assignAndResume(job, cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		windows.CloseHandle(job)
		return nil, fmt.Errorf("killed: it could not be put in a job object: %w", err)
	}
	return g, nil
}

// assignAndResume puts the suspended process pid in job, then resumes its threads.
func assignAndResume(job windows.Handle, pid int) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return err
	}
	err = windows.AssignProcessToJobObject(job, h)
	windows.CloseHandle(h)
	if err != nil {
		return err
	}
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != uint32(pid) {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return err
		}
		resumed++
	}
	if resumed == 0 {
		return fmt.Errorf("process %d has no thread to resume", pid)
	}
	return nil
}

// end ends what is left in the job and closes it.
func (g *group) end() error {
	_ = windows.TerminateJobObject(g.job, 1)
	return windows.CloseHandle(g.job)
}
