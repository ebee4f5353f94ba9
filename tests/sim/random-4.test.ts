/** Random fault schedules, seeds 37–48 (split in files so the runner can use both cores). */
import { randomSuite } from './framework/random-suite.js';

randomSuite(37, 49);
