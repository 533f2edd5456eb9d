/* ptbwdog.efi: the watchdog test's boot image (test/hang/watchdog.sh), the
 * stick's \EFI\BOOT\BOOTX64.EFI. It arms the UEFI watchdog with a short
 * PTBWDOG_SECONDS (UEFI 2.10 section 7.5) and then, on the first boot,
 * stalls longer than that: the watchdog must reset the machine (the
 * control: it really fires here). On the boot after (the variable
 * PtbwdogControl says the control ran), it starts \EFI\ptboot\ptboot.efi,
 * whose run (\ptboot.cfg) takes longer than PTBWDOG_SECONDS; ptboot must
 * switch the watchdog off while it works and arm it again as the boot
 * manager would, so the machine is not reset. Back here it stalls once
 * more, longer than PTBWDOG_SECONDS (ptboot left 5 minutes, not the short
 * one), prints "ptbwdog: no reset" and shuts down.
 * Lines: "ptbwdog: control armed=<s>", "ptbwdog: armed=<s> starting ptboot",
 * "ptbwdog: ptboot returned after=<s>" (by the real-time clock: the run
 * took longer than the watchdog it was given), "ptbwdog: no reset".
 * No libc, no libefi (built like ptbtest.efi). */
#include <efi.h>

#define PTBWDOG_SECONDS  1
#define PTBWDOG_STALL_US 3000000
#define PTBWDOG_VAR      L"PtbwdogControl"
static EFI_GUID wdog_guid = {
    0x5b2f8a31, 0x07c4, 0x4e6d, { 0x8f, 0x12, 0x6a, 0x3d, 0x90, 0x1e, 0x44, 0xc7 }
};
static const CHAR16 ptboot_path[] = L"\\EFI\\ptboot\\ptboot.efi";

/* A device path: the boot volume's, a file path node, the end node (UEFI
 * 2.10 sections 10.3.1 and 10.3.5.4). */
static UINT8 dp[1024];

static void say(EFI_SYSTEM_TABLE *st, const CHAR16 *s)
{
    st->ConOut->OutputString(st->ConOut, (CHAR16 *)s);
}

/* Seconds of the day by the real-time clock (GetTime, section 8.3). */
static UINT32 now_s(EFI_SYSTEM_TABLE *st)
{
    EFI_TIME t;
    if (EFI_ERROR(st->RuntimeServices->GetTime(&t, NULL)))
        return 0;
    return (UINT32)t.Hour * 3600 + (UINT32)t.Minute * 60 + t.Second;
}

static EFI_DEVICE_PATH *file_path(EFI_SYSTEM_TABLE *st, EFI_HANDLE device)
{
    EFI_GUID dpg = DEVICE_PATH_PROTOCOL;
    UINT8 *dev = NULL;
    if (EFI_ERROR(st->BootServices->HandleProtocol(device, &dpg, (void **)&dev)) || !dev)
        return NULL;
    UINTN n = 0;
    while (!(dev[n] == 0x7f && dev[n + 1] == 0xff)) { /* End of Entire Device Path */
        UINTN len = dev[n + 2] | (UINTN)dev[n + 3] << 8;
        if (len < 4 || n + len + 64 > sizeof dp)
            return NULL;
        n += len;
    }
    for (UINTN i = 0; i < n; i++)
        dp[i] = dev[i];
    UINTN chars = sizeof ptboot_path / sizeof ptboot_path[0];
    UINTN node = 4 + chars * 2;
    dp[n] = 4;     /* media */
    dp[n + 1] = 4; /* file path */
    dp[n + 2] = (UINT8)node;
    dp[n + 3] = (UINT8)(node >> 8);
    for (UINTN i = 0; i < chars; i++) {
        dp[n + 4 + 2 * i] = (UINT8)ptboot_path[i];
        dp[n + 5 + 2 * i] = (UINT8)(ptboot_path[i] >> 8);
    }
    n += node;
    dp[n] = 0x7f;
    dp[n + 1] = 0xff;
    dp[n + 2] = 4;
    dp[n + 3] = 0;
    return (EFI_DEVICE_PATH *)dp;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
    EFI_BOOT_SERVICES *bs = st->BootServices;
    EFI_RUNTIME_SERVICES *rt = st->RuntimeServices;
    UINT8 flag = 1;
    UINTN size = sizeof flag;
    if (EFI_ERROR(rt->GetVariable(PTBWDOG_VAR, &wdog_guid, NULL, &size, &flag))) {
        rt->SetVariable(PTBWDOG_VAR, &wdog_guid,
                        EFI_VARIABLE_NON_VOLATILE | EFI_VARIABLE_BOOTSERVICE_ACCESS, sizeof flag,
                        &flag);
        bs->SetWatchdogTimer(PTBWDOG_SECONDS, 0, 0, NULL);
        say(st, L"ptbwdog: control armed=1\r\n");
        bs->Stall(PTBWDOG_STALL_US);
        say(st, L"ptbwdog: control not reset\r\n");
        return EFI_ABORTED;
    }
    rt->SetVariable(PTBWDOG_VAR, &wdog_guid, 0, 0, NULL);
    EFI_GUID lip = LOADED_IMAGE_PROTOCOL;
    EFI_LOADED_IMAGE *li = NULL;
    EFI_HANDLE child = NULL;
    EFI_DEVICE_PATH *path = NULL;
    if (EFI_ERROR(bs->HandleProtocol(image, &lip, (void **)&li)) || !li ||
        !(path = file_path(st, li->DeviceHandle)) ||
        EFI_ERROR(bs->LoadImage(FALSE, image, path, NULL, 0, &child))) {
        say(st, L"ptbwdog: error: cannot load \\EFI\\ptboot\\ptboot.efi\r\n");
        return EFI_NOT_FOUND;
    }
    bs->SetWatchdogTimer(PTBWDOG_SECONDS, 0, 0, NULL);
    say(st, L"ptbwdog: armed=1 starting ptboot\r\n");
    UINT32 t0 = now_s(st);
    bs->StartImage(child, NULL, NULL);
    UINT32 dt = (now_s(st) + 86400 - t0) % 86400;
    CHAR16 line[] = L"ptbwdog: ptboot returned after=000\r\n";
    line[31] = (CHAR16)(L'0' + dt / 100 % 10);
    line[32] = (CHAR16)(L'0' + dt / 10 % 10);
    line[33] = (CHAR16)(L'0' + dt % 10);
    say(st, line);
    bs->Stall(PTBWDOG_STALL_US);
    say(st, L"ptbwdog: no reset\r\n");
    rt->ResetSystem(EfiResetShutdown, EFI_SUCCESS, 0, NULL);
    return EFI_SUCCESS;
}
