export { ConsoleWatcher, type ConsoleWatcherDeps } from './watcher.js';
export { FakeConsoleFiles, realConsoleFiles, type ConsoleFiles, type FileStat } from './files.js';
export { consoleLogPath, vncAddress, virshLiveXml, type LiveXmlReader } from './live-xml.js';
