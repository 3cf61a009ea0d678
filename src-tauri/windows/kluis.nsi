; Kluis's installer for people who double-click: made on Linux with Debian's NSIS (makensis,
; Modern UI 2, in Dutch and English) by tests/windows/installer.sh — not Tauri's NSIS bundler,
; which downloads a plug-in from GitHub. Defines given with -D: VERSION (X.Y.Z), BIN (the
; folder of the programs), OUTFILE, FAST (no compression: the tests'), and SIGNER (a script that signs the file it is given in
; place) when the uninstaller it writes is to be signed as the installer is.
;
; For this user, without administrator rights (%LOCALAPPDATA%\Programs\Kluis: for every user
; of a computer, IT installs kluis-X.Y.Z-x64-machine.msi); /S installs silently. "Start Kluis when I log in" is offered as a component. The uninstaller
; removes the program, its shortcut, its Apps-list entry and its start at log-in, and says that
; the user's backups, history, settings and saved secrets stay. Installing over an installed
; Kluis upgrades it in place (the same folder, the same entry).

; A 64-bit installer for the 64-bit programs (it also runs under Wine's wine64 alone).
Target amd64-unicode
!ifdef SIGNER
!uninstfinalize 'sh "${SIGNER}" "%1"'
!endif
!ifdef FAST
SetCompress off  ; (the tests' installers: made in a second instead of two minutes)
!else
SetCompressor /SOLID lzma
!endif
RequestExecutionLevel user
InstallDir "$LOCALAPPDATA\Programs\Kluis"

!define PRODUCT "Kluis"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\Kluis"

!include MUI2.nsh
!include LogicLib.nsh
!include FileFunc.nsh

Name "${PRODUCT}"
OutFile "${OUTFILE}"
VIProductVersion "${VERSION}.0"
VIAddVersionKey /LANG=0 "ProductName" "${PRODUCT}"
VIAddVersionKey /LANG=0 "ProductVersion" "${VERSION}"
VIAddVersionKey /LANG=0 "FileVersion" "${VERSION}"
VIAddVersionKey /LANG=0 "FileDescription" "${PRODUCT} installer"
VIAddVersionKey /LANG=0 "LegalCopyright" "MIT licence"

!define MUI_ICON "icon.ico"
!define MUI_UNICON "icon.ico"
!define MUI_ABORTWARNING
!define MUI_FINISHPAGE_RUN "$INSTDIR\kluis-app.exe"

!insertmacro MUI_PAGE_COMPONENTS
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES

!insertmacro MUI_LANGUAGE "English"
!insertmacro MUI_LANGUAGE "Dutch"

LangString SecProgram ${LANG_ENGLISH} "Kluis"
LangString SecProgram ${LANG_DUTCH} "Kluis"
LangString SecAutostart ${LANG_ENGLISH} "Start Kluis when I log in"
LangString SecAutostart ${LANG_DUTCH} "Kluis starten als ik me aanmeld"
LangString StillRunning ${LANG_ENGLISH} "Kluis is still running. Close its window and choose Quit Kluis in its menu in the notification area; wait for a scheduled backup (kluis.exe) to end, or stop the office relay (kluis-relay.exe). Then choose Retry."
LangString StillRunning ${LANG_DUTCH} "Kluis draait nog. Sluit het venster en kies Quit Kluis in het menu van Kluis in het systeemvak; wacht tot een geplande back-up (kluis.exe) klaar is, of stop de kantoorrelay (kluis-relay.exe). Kies dan Opnieuw."
LangString DataKept ${LANG_ENGLISH} "Kluis is removed. Your backups, their history, your settings and saved passwords stay where they are."
LangString DataKept ${LANG_DUTCH} "Kluis is verwijderd. Uw back-ups, hun geschiedenis, uw instellingen en bewaarde wachtwoorden blijven waar ze zijn."

; /UPDATE: started by the window's own update (Settings → Updates), which ends the app as it
; starts this. (kluis-tray's update, with the window closed, passes /S /D= only.) The app's program is replaced only once the app has let
; go of it (waited for, at most a minute), and the app is started again at the end.
Var Updating
; kluis-tray (it keeps the plans while the window is closed) is asked to quit before its program
; is replaced or removed, and started again after an install when it ran (after the app's
; update, the window is started: it hands the plans on when closed).
Var TrayRan

; WaitForFile / un.WaitForFile: until the program $R1 is no longer running (its file can be
; opened to write: Windows keeps a running program's file from that), at most a minute.
; StopTheTray / un.StopTheTray: kluis-tray asked to quit (`kluis-tray.exe --quit`, as its
; menu's Quit does) and waited for, when it runs; $TrayRan says whether it did.
!macro ProgramFunctions un
Function ${un}WaitForFile
  ; (None there: nothing to wait for — and "a" would make an empty one.)
  ${IfNot} ${FileExists} "$R1"
    Return
  ${EndIf}
  StrCpy $R2 0
  ${Do}
    ClearErrors
    FileOpen $R3 "$R1" a
    ${IfNot} ${Errors}
      FileClose $R3
      ${Break}
    ${EndIf}
    IntOp $R2 $R2 + 1
    ${If} $R2 > 120
      ${Break}
    ${EndIf}
    Sleep 500
  ${Loop}
FunctionEnd

Function ${un}StopTheTray
  StrCpy $TrayRan 0
  StrCpy $R1 "$INSTDIR\kluis-tray.exe"
  ${If} ${FileExists} "$R1"
    ClearErrors
    FileOpen $R3 "$R1" a
    ${If} ${Errors}
      StrCpy $TrayRan 1
      ; (It answers once it has gone, within a minute.)
      ExecWait '"$R1" --quit'
      Call ${un}WaitForFile
    ${Else}
      FileClose $R3
    ${EndIf}
  ${EndIf}
FunctionEnd

; RequireFree / un.RequireFree: the program $R1 is not running, or the user is asked to close
; Kluis and retry; cancelled (the silent default), the setup stops with exit code 2 and changes
; nothing more — never a mix of old and new programs.
Function ${un}RequireFree
  ${If} ${FileExists} "$R1"
  retry:
    ClearErrors
    FileOpen $R3 "$R1" a
    ${If} ${Errors}
      MessageBox MB_RETRYCANCEL|MB_ICONEXCLAMATION "$(StillRunning)" /SD IDCANCEL IDRETRY retry
      DetailPrint "$(StillRunning)"
      SetErrorLevel 2
      Abort
    ${EndIf}
    FileClose $R3
  ${EndIf}
FunctionEnd

; RequireOthersFree / un.RequireOthersFree: RequireFree for every program but kluis-tray.
Function ${un}RequireOthersFree
  StrCpy $R1 "$INSTDIR\kluis-app.exe"
  Call ${un}RequireFree
  StrCpy $R1 "$INSTDIR\kluis.exe"
  Call ${un}RequireFree
  StrCpy $R1 "$INSTDIR\kluis-relay.exe"
  Call ${un}RequireFree
FunctionEnd
!macroend
!insertmacro ProgramFunctions ""
!insertmacro ProgramFunctions "un."

Section "!$(SecProgram)" SecMain
  SectionIn RO
  SetOutPath "$INSTDIR"
  ${If} $Updating == 1
    StrCpy $R1 "$INSTDIR\kluis-app.exe"
    Call WaitForFile
  ${EndIf}
  ; The others first, so that kluis-tray (and a backup it runs) is not stopped for nothing; a
  ; scheduled kluis.exe is given its minute to end. Then every program is free before the
  ; first is replaced: never a mix of old and new.
  StrCpy $R1 "$INSTDIR\kluis.exe"
  Call WaitForFile
  Call RequireOthersFree
  Call StopTheTray
  Call RequireOthersFree
  StrCpy $R1 "$INSTDIR\kluis-tray.exe"
  Call RequireFree
  File "${BIN}\kluis-app.exe"
  File "${BIN}\kluis.exe"
  File "${BIN}\kluis-relay.exe"
  File "${BIN}\kluis-tray.exe"
  ; Microsoft's, which kluis-app.exe loads (the GNU toolchain links it dynamically).
  File "${BIN}\WebView2Loader.dll"
  File "README.txt"
  WriteUninstaller "$INSTDIR\uninstall.exe"
  CreateShortcut "$SMPROGRAMS\Kluis.lnk" "$INSTDIR\kluis-app.exe"
  ; The Apps list's entry, for this user.
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayName" "${PRODUCT}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "Publisher" "${PRODUCT}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\kluis-app.exe"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "Comments" "Uninstalling removes the program; your backups, history and settings stay."
  WriteRegStr HKCU "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoRepair" 1
  ; What ran runs again: after the app's own update the window (which takes the plans, and
  ; leaves them to kluis-tray when it is closed); else kluis-tray, when it ran.
  ${If} $Updating == 1
    Exec '"$INSTDIR\kluis-app.exe"'
  ${ElseIf} $TrayRan == 1
    Exec '"$INSTDIR\kluis-tray.exe"'
  ${EndIf}
SectionEnd

; A setup or uninstaller that stopped (a program still running) starts again what it ended:
; the window the app's own update closed, or else the kluis-tray it quit — so that something
; keeps the plans.
Function .onInstFailed
  ${If} $Updating == 1
    Exec '"$INSTDIR\kluis-app.exe"'
  ${ElseIf} $TrayRan == 1
    Exec '"$INSTDIR\kluis-tray.exe"'
  ${EndIf}
FunctionEnd

Function un.onUninstFailed
  ${If} $TrayRan == 1
    Exec '"$INSTDIR\kluis-tray.exe"'
  ${EndIf}
FunctionEnd

; Off unless chosen (or /AUTOSTART=1 with /S): the Run value the app's own Settings switch writes.
Section /o "$(SecAutostart)" SecAutostart
  WriteRegStr HKCU "Software\Microsoft\Windows\CurrentVersion\Run" "Kluis" '"$INSTDIR\kluis-app.exe" --hidden'
SectionEnd

Function .onInit
  ; /AUTOSTART=1 on the command line (a silent install's way to tick the component).
  ${GetParameters} $R0
  ClearErrors
  ${GetOptions} $R0 "/AUTOSTART=" $R1
  ${IfNot} ${Errors}
  ${AndIf} $R1 == "1"
    SectionSetFlags ${SecAutostart} ${SF_SELECTED}
  ${EndIf}
  ClearErrors
  ${GetOptions} $R0 "/UPDATE" $R1
  ${IfNot} ${Errors}
    StrCpy $Updating 1
  ${EndIf}
  ; An installed Kluis is upgraded where it is — the folder the user chose, which its Apps
  ; list's entry records — also by a setup that names none (/D=; the app's own update and
  ; kluis-tray's name theirs); taken only when Kluis's uninstaller and window are there (not an
  ; old or another entry's folder), and not over a Kluis in the default folder (NSIS does not
  ; tell a /D= naming the default folder from none).
  ${If} $INSTDIR == "$LOCALAPPDATA\Programs\Kluis"
  ${AndIfNot} ${FileExists} "$INSTDIR\uninstall.exe"
    ReadRegStr $R1 HKCU "${UNINSTALL_KEY}" "InstallLocation"
    ${If} $R1 != ""
    ${AndIf} ${FileExists} "$R1\uninstall.exe"
    ${AndIf} ${FileExists} "$R1\kluis-app.exe"
      StrCpy $INSTDIR $R1
    ${EndIf}
  ${EndIf}
FunctionEnd

Section "Uninstall"
  StrCpy $R1 "$INSTDIR\kluis.exe"
  Call un.WaitForFile
  Call un.RequireOthersFree
  Call un.StopTheTray
  Call un.RequireOthersFree
  StrCpy $R1 "$INSTDIR\kluis-tray.exe"
  Call un.RequireFree
  Delete "$INSTDIR\kluis-app.exe"
  Delete "$INSTDIR\kluis.exe"
  Delete "$INSTDIR\kluis-relay.exe"
  Delete "$INSTDIR\kluis-tray.exe"
  Delete "$INSTDIR\WebView2Loader.dll"
  Delete "$INSTDIR\README.txt"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  Delete "$SMPROGRAMS\Kluis.lnk"
  DeleteRegValue HKCU "Software\Microsoft\Windows\CurrentVersion\Run" "Kluis"
  DeleteRegKey HKCU "${UNINSTALL_KEY}"
  ; The name and icon Kluis's notifications show, which its programs registered
  ; (kluis-reporting's app_identity).
  DeleteRegKey HKCU "Software\Classes\AppUserModelId\nl.kluis.desktop"
  Delete "$LOCALAPPDATA\nl.kluis.desktop\notification-icon.png"
  Delete "$LOCALAPPDATA\nl.kluis.desktop\notification-icon.png.*.part"
  IfSilent +2
    MessageBox MB_OK|MB_ICONINFORMATION "$(DataKept)"
  DetailPrint "$(DataKept)"
SectionEnd
